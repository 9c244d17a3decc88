// Contenox transitions as Contenox's engine runs them, through the real CLI: a default branch is the
// last resort wherever it is written, a raised error goes to on_failure, and {{var:A|var:B}} falls
// back to B's value.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stepforgeWithStdin, tempProject } from './support/testIo.js';

const stepforge = stepforgeWithStdin;

const end = { branches: [{ operator: 'default', goto: 'end' }] };

describe('Command: run (Contenox transitions)', () => {
  const project = tempProject('sf-contenox-transitions-');
  afterAll(() => project.remove());
  writeFileSync(join(project.dir, 'policy.json'), '[]');

  it('takes a matching branch before a default written ahead of it', () => {
    writeFileSync(
      join(project.dir, 'default-first.json'),
      JSON.stringify({
        id: 'default-first',
        tasks: [
          {
            id: 'check',
            handler: 'noop',
            transition: {
              branches: [
                { operator: 'default', goto: 'fallback' },
                { operator: 'equals', when: 'noop', goto: 'matched' },
              ],
            },
          },
          { id: 'matched', handler: 'noop', transition: end },
          { id: 'fallback', handler: 'raise_error', transition: end },
        ],
      }),
    );
    const r = stepforge(project.dir, ['run', 'default-first.json', '--json'], 'hello');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ status: 'SUCCEEDED', output: 'hello' });
  }, 120_000);

  it("sends a raise_error task's error to its on_failure task", () => {
    writeFileSync(
      join(project.dir, 'raise.json'),
      JSON.stringify({
        id: 'raise',
        tasks: [
          { id: 'boom', handler: 'raise_error', transition: { on_failure: 'recover', branches: [] } },
          { id: 'recover', handler: 'noop', transition: end },
        ],
      }),
    );
    const r = stepforge(project.dir, ['run', 'raise.json', '--json'], 'bad input');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ status: 'SUCCEEDED', output: { Error: 'ContenoxRaiseError', Cause: 'bad input' } });
  }, 120_000);

  it('fills {{var:alt_model|var:model}} with model when alt_model is not set', () => {
    writeFileSync(
      join(project.dir, 'alt.json'),
      JSON.stringify({
        id: 'alt',
        tasks: [
          {
            id: 'ask',
            handler: 'chat_completion',
            prompt_template: 'model {{var:alt_model|var:model}}: {{.input}}',
            execute_config: { model: '{{var:alt_model|var:model}}', provider: 'local' },
            transition: end,
          },
        ],
      }),
    );
    const r = stepforge(project.dir, ['run', 'alt.json', '--var', 'model=primary', '--json'], 'hi');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ status: 'SUCCEEDED', output: '[offline:echo] model primary: hi' });
  }, 120_000);
});
