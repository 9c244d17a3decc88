// Contenox's runtime macros and template variables through the real CLI, as a chain's author sees
// them in the output: the run's date, a loop's count, the error on_failure took, and Go's
// `<no value>` for a key the template's data lacks.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stepforgeWithStdin, tempProject } from './support/testIo.js';

const stepforge = stepforgeWithStdin;

const end = { branches: [{ operator: 'default', goto: 'end' }] };

describe('Command: run (Contenox macros and template variables)', () => {
  const project = tempProject('sf-contenox-macros-');
  afterAll(() => project.remove());
  writeFileSync(join(project.dir, 'policy.json'), '[]');

  it('fills {{date}}, {{chain:id}} and {{edge_count:…}} when the task runs', () => {
    writeFileSync(
      join(project.dir, 'loop.json'),
      JSON.stringify({
        id: 'looper',
        tasks: [
          {
            id: 'spin',
            handler: 'noop',
            transition: {
              branches: [
                { operator: 'edge_traversed_at_least', edge: 'spin->spin', when: '2', goto: 'report' },
                // Never taken: an edge to end is never counted.
                { operator: 'edge_traversed_at_least', edge: 'spin->end', when: '1', goto: 'end' },
                { operator: 'default', goto: 'spin' },
              ],
            },
          },
          {
            id: 'report',
            handler: 'chat_completion',
            prompt_template:
              '{{chain:id}} on {{date}}: spun {{edge_count:spin->spin}}, reached {{edge_count:spin->report}}, ended {{edge_count:spin->end}}; {{.input}}',
            execute_config: { model: 'echo', provider: 'local' },
            transition: end,
          },
        ],
      }),
    );
    const before = new Date().toISOString().slice(0, 10);
    const r = stepforge(project.dir, ['run', 'loop.json', '--json'], 'go');
    const after = new Date().toISOString().slice(0, 10);
    expect(r.code, r.err).toBe(0);
    const { status, output } = JSON.parse(r.out) as { status: string; output: string };
    expect(status).toBe('SUCCEEDED');
    expect([before, after].map((d) => `[offline:echo] looper on ${d}: spun 2, reached 1, ended 0; go`)).toContain(output);
  }, 120_000);

  it('gives the failure handler {{.last_error}} and {{.<task>_error}}, and <no value> for a missing key', () => {
    writeFileSync(
      join(project.dir, 'errors.json'),
      JSON.stringify({
        id: 'errors',
        tasks: [
          { id: 'boom', handler: 'raise_error', transition: { on_failure: 'explain', branches: [] } },
          {
            id: 'explain',
            handler: 'chat_completion',
            prompt_template: 'last={{.last_error}} boom={{.boom_error}} other={{.nothing}}',
            execute_config: { model: 'echo', provider: 'local' },
            transition: end,
          },
        ],
      }),
    );
    const r = stepforge(project.dir, ['run', 'errors.json', '--json'], 'bad input');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({
      status: 'SUCCEEDED',
      output: '[offline:echo] last=task boom: bad input boom=task boom: bad input other=<no value>',
    });
  }, 120_000);

  it('warns of {{host:os}} at the macro in validate', () => {
    writeFileSync(
      join(project.dir, 'host.json'),
      JSON.stringify({
        id: 'host',
        tasks: [{ id: 'ask', handler: 'chat_completion', system_instruction: 'OS: {{host:os}}', transition: end }],
      }),
    );
    const r = stepforge(project.dir, ['validate', 'host.json'], '');
    expect(r.code, r.err).toBe(0);
    expect(r.err + r.out).toContain('warning[unsupported_macro] host.json:1:89: macro {{host:os}} is kept as written');
  }, 120_000);
});
