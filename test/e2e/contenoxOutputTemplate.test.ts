// A Contenox tools task's output_template, through the real CLI: the tool's JSON output is the
// template's data, and the rendered text is the task's output, which the next task reads.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stepforgeWithStdin, tempProject } from './support/testIo.js';

const end = { branches: [{ operator: 'default', goto: 'end' }] };

describe('Command: run (Contenox output_template)', () => {
  const project = tempProject('sf-contenox-output-template-');
  afterAll(() => project.remove());
  writeFileSync(join(project.dir, 'policy.json'), '[]');
  mkdirSync(join(project.dir, 'sub'));
  writeFileSync(join(project.dir, 'sub', 'small.txt'), 'small\n');

  const chain = (template: string) =>
    JSON.stringify({
      id: 'templated',
      tasks: [
        {
          id: 'call',
          handler: 'tools',
          tools: { name: 'local_shell', tool_name: 'local_shell', args: { command: 'ls sub' } },
          output_template: template,
          transition: { branches: [{ operator: 'default', goto: 'after' }] },
        },
        { id: 'after', handler: 'noop', input_var: 'call', transition: end },
      ],
    });

  it('renders the tool output through the template, fields by name, a missing one as <no value>', () => {
    writeFileSync(join(project.dir, 'fields.json'), chain('exit {{.exitCode}}: {{ .stdout -}}  !{{.missing}}'));
    const r = stepforgeWithStdin(project.dir, ['run', 'fields.json', '--json'], 'x');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ status: 'SUCCEEDED', output: 'exit 0: small.txt\n!<no value>' });
  }, 120_000);

  it('prints the whole output for {{.}}, as JSON when it is not text', () => {
    writeFileSync(join(project.dir, 'whole.json'), chain('got {{.}}'));
    const r = stepforgeWithStdin(project.dir, ['run', 'whole.json', '--json'], 'x');
    expect(JSON.parse(r.out)).toMatchObject({
      status: 'SUCCEEDED',
      output: 'got {"exitCode":0,"stdout":"small.txt\\n","stderr":""}',
    });
  }, 120_000);
});
