// A `function:` name that finds both NAME.py and NAME.js in the project's functions folder is
// refused by the runtime (ConfigError); validate and compile report it before any run, at the
// `function:` value, naming both files and how to choose.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '@stepforge/cli';
import { bufferIo, cliIn, tempProject } from './support/testIo.js';

const FLOW = `document: {dsl: "1.0.0", name: Echo twice, version: "0.1.0"}
functions: {echo: "", "echo.py": ""}
steps:
  first:
    call: function
    function: echo
  second:
    call: function
    function: echo.py
`;

describe('CLI: validate and compile report a function name that finds a Python and a JavaScript module', () => {
  const project = tempProject('sf-ambiguous-');
  const stepforge = cliIn(project.dir);
  beforeAll(() => {
    mkdirSync(join(project.dir, 'functions', 'user'), { recursive: true });
    writeFileSync(join(project.dir, 'functions', 'user', 'echo.py'), 'def handler(input, context):\n    return "python"\n');
    writeFileSync(join(project.dir, 'functions', 'user', 'echo.js'), 'export default async () => "javascript";\n');
    mkdirSync(join(project.dir, 'other'));
    writeFileSync(join(project.dir, 'other', 'echo.py'), 'def handler(input, context):\n    return "python"\n');
    writeFileSync(join(project.dir, 'flow.yaml'), FLOW);
  });
  afterAll(() => project.remove());

  const expected = [
    "error[ambiguous_function] flow.yaml:6:15: function 'echo' is ambiguous: functions/user has both echo.py and echo.js",
    '  |',
    '6 |     function: echo',
    '  |               ^^^^',
    '  = help: name the one to run with its extension (function: echo.py or function: echo.js, declared under functions: with the same name), or remove the other',
  ].join('\n');

  it('validate: a located error at the function: value (exit 1); the name with its extension is fine', async () => {
    const r = await stepforge('validate', 'flow.yaml');
    expect(r.code).toBe(1);
    expect(r.err).toContain(expected);
    expect(r.err).not.toContain('flow.yaml:9:');
  });

  it('validate --json: the class, message and location', async () => {
    const r = await stepforge('validate', 'flow.yaml', '--json');
    expect(JSON.parse(r.out)).toMatchObject({
      error: {
        class: 'ambiguous_function',
        message: "function 'echo' is ambiguous: functions/user has both echo.py and echo.js",
        line: 6,
        column: 15,
      },
    });
  });

  it('compile: the same error, and nothing written', async () => {
    const r = await stepforge('compile', 'flow.yaml', '-o', 'out');
    expect(r.code).toBe(1);
    expect(r.err).toContain(expected);
  });

  it('checks the folder STEPFORGE_FUNCTIONS_DIR names instead, where only echo.py is', async () => {
    const io = bufferIo(project.dir, { STEPFORGE_FUNCTIONS_DIR: 'other' });
    expect(await main(['validate', 'flow.yaml'], io)).toBe(0);
  });
});
