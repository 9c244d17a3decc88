import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../main.js';
import type { CliIo } from '../CliIo.js';

function bufferIo(cwd: string): CliIo & { stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  return {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    isTTY: false,
    cwd,
    env: {},
    stdout: () => out,
    stderr: () => err,
  };
}

describe('Command: asl run', () => {
  let dir: string;
  const write = (name: string, content: unknown) => {
    writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
    return name;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'stepforge-asl-'));
    write(
      'handlers.mjs',
      `export default {
        greet: async (e) => ({ greeting: 'hello ' + e.name }),
        'arn:aws:lambda:eu-west-1:111122223333:function:boom': async () => { const e = new Error('it broke'); e.name = 'BoomError'; throw e; },
      };`,
    );
    write('not-an-object.mjs', 'export default 42;');
    write('greet.asl.json', {
      StartAt: 'Greet',
      States: {
        Greet: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:greet', ResultPath: '$.result', Next: 'Context' },
        Context: {
          Type: 'Pass',
          Parameters: { 'result.$': '$.result', 'execution.$': '$$.Execution.Id', 'machine.$': '$$.StateMachine.Name' },
          End: true,
        },
      },
    });
    write('boom.json', {
      StartAt: 'Boom',
      States: { Boom: { Type: 'Task', Resource: 'arn:aws:lambda:eu-west-1:111122223333:function:boom', End: true } },
    });
    write('broken.json', '{\n  "StartAt": "A",\n  "States": {\n    "A": { "Type": "Pass", "End": true },\n  }\n}\n');
    write('dangling.json', { StartAt: 'A', States: { A: { Type: 'Pass', Next: 'Nowhere' } } });
    write('ecs.json', {
      StartAt: 'Pass0',
      States: {
        Pass0: { Type: 'Pass', Next: 'RunTask' },
        RunTask: { Type: 'Task', Resource: 'arn:aws:states:::ecs:runTask.sync', End: true },
      },
    });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs a definition with handlers and prints status, output, error and cause (exit 0)', async () => {
    const io = bufferIo(dir);
    const code = await main(
      ['asl', 'run', 'greet.asl.json', '--input', '{"name":"Ada"}', '--handlers', 'handlers.mjs', '--execution-name', 'first'],
      io,
    );
    expect(io.stderr()).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(io.stdout())).toEqual({
      status: 'SUCCEEDED',
      output: {
        result: { greeting: 'hello Ada' },
        execution: 'arn:aws:states:us-east-1:123456789012:execution:greet:first',
        machine: 'greet',
      },
      error: null,
      cause: null,
    });
  });

  it('reads --input @FILE', async () => {
    write('input.json', { name: 'File' });
    const io = bufferIo(dir);
    expect(await main(['asl', 'run', 'greet.asl.json', '--input', '@input.json', '--handlers', 'handlers.mjs'], io)).toBe(0);
    expect((JSON.parse(io.stdout()) as { output: { result: unknown } }).output.result).toEqual({ greeting: 'hello File' });
  });

  it('uses --state-machine-name, --execution-name, --account and --region in ARNs and prints --history', async () => {
    const io = bufferIo(dir);
    const code = await main(
      [
        'asl',
        'run',
        'greet.asl.json',
        '--input',
        '{"name":"Bo"}',
        '--handlers',
        'handlers.mjs',
        '--history',
        '--state-machine-name',
        'Greeter',
        '--execution-name',
        'exec-42',
        '--account',
        '111122223333',
        '--region',
        'eu-west-1',
      ],
      io,
    );
    expect(code).toBe(0);
    const report = JSON.parse(io.stdout()) as { output: { execution: string; machine: string }; history: { type: string; id: number }[] };
    expect(report.output.execution).toBe('arn:aws:states:eu-west-1:111122223333:execution:Greeter:exec-42');
    expect(report.output.machine).toBe('Greeter');
    expect(report.history[0]).toMatchObject({ type: 'ExecutionStarted', id: 1 });
    expect(report.history.at(-1)).toMatchObject({ type: 'ExecutionSucceeded' });
    expect(report.history.map((e) => e.type)).toContain('LambdaFunctionSucceeded');
  });

  it("fails the task with the thrown error's name (exit 1)", async () => {
    const io = bufferIo(dir);
    const code = await main(['asl', 'run', 'boom.json', '--handlers', 'handlers.mjs'], io);
    expect(code).toBe(1);
    const report = JSON.parse(io.stdout()) as { status: string; output: unknown; error: string; cause: string };
    expect(report.status).toBe('FAILED');
    expect(report.output).toBeNull();
    expect(report.error).toBe('BoomError');
    expect(report.cause).toContain('it broke');
  });

  it('reports a definition that is not JSON with its line and column (exit 1)', async () => {
    const io = bufferIo(dir);
    const code = await main(['asl', 'run', 'broken.json'], io);
    expect(code).toBe(1);
    expect(io.stdout()).toBe('');
    expect(io.stderr()).toMatch(/^error\[invalid_definition\] broken\.json:5:3: the definition is not valid JSON/);
    expect(io.stderr()).toContain('5 |   }');
  });

  it('rejects an invalid definition before running, with the reason (exit 1)', async () => {
    const io = bufferIo(dir);
    expect(await main(['asl', 'run', 'dangling.json'], io)).toBe(1);
    expect(io.stderr()).toMatch(
      /^error\[invalid_definition\] dangling\.json:4:5: Invalid State Machine Definition: 'MISSING_TRANSITION_TARGET: .*Nowhere at \/States\/A\/Next'/,
    );
  });

  it('rejects an unsupported resource before running and points at its state (exit 1)', async () => {
    const io = bufferIo(dir);
    expect(await main(['asl', 'run', 'ecs.json', '--json'], io)).toBe(1);
    const err = JSON.parse(io.stdout()) as { error: { class: string; message: string; line: number; column: number } };
    expect(err.error.class).toBe('invalid_definition');
    expect(err.error.message).toContain("Resource 'arn:aws:states:::ecs:runTask.sync' is not supported by the embedded engine");
    expect([err.error.line, err.error.column]).toEqual([8, 5]); // the `"RunTask": {` key, not the earlier `"Next": "RunTask"`
  });

  it('rejects input that is not JSON (exit 1) and a handlers module without a default object', async () => {
    const bad = bufferIo(dir);
    expect(await main(['asl', 'run', 'greet.asl.json', '--input', '{"name":'], bad)).toBe(1);
    expect(bad.stderr()).toMatch(/^error\[invalid_input\] <--input>:1:\d+: --input is not valid JSON/);

    const mod = bufferIo(dir);
    expect(await main(['asl', 'run', 'greet.asl.json', '--handlers', 'not-an-object.mjs'], mod)).toBe(1);
    expect(mod.stderr()).toContain(
      "error[invalid_handlers] not-an-object.mjs:1:1: the handlers module 'not-an-object.mjs' must default-export an object",
    );

    const missing = bufferIo(dir);
    expect(await main(['asl', 'run', 'nope.json'], missing)).toBe(1);
    expect(missing.stderr()).toContain("error[file_not_found] nope.json:1:1: cannot read the definition file 'nope.json' (ENOENT)");
  });

  it('treats usage mistakes as exit 2', async () => {
    const none = bufferIo(dir);
    expect(await main(['asl', 'run'], none)).toBe(2);
    expect(none.stderr()).toContain('error[usage] expected exactly one DEFINITION.json, got 0');
    const flag = bufferIo(dir);
    expect(await main(['asl', 'run', 'greet.asl.json', '--bogus'], flag)).toBe(2);
    expect(flag.stderr()).toContain("error[usage] Unknown option '--bogus'");
    const sub = bufferIo(dir);
    expect(await main(['asl', 'walk'], sub)).toBe(2);
    expect(sub.stderr()).toContain("unknown sub-command 'asl walk'");
  });
});
