// Python user functions run by real python3: the worker process (one per runtime, answering calls by
// id), the function handler over it against dynalite (context, keyword arguments, secrets, print(),
// errors, idempotency), and how a function name resolves when a Python and a JavaScript module
// share it.
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createFunctionHandler } from '../src/handlers/function.js';
import type { Runtime } from '../src/runtime/Runtime.js';
import { PythonWorker, type PythonCall } from '../src/userfn/PythonWorker.js';
import { resolveUserFunction } from '../src/userfn/resolveUserFunction.js';
import { envelope } from './envelope.js';
import { userFunctionsFixture } from './emulators.js';
import { isProcessAlive as alive } from '../../../test/support/isProcessAlive.js';
import { runtimePythonWorker } from '../src/userfn/runtimePythonWorker.js';

const SECRET = 'news-api-key-1234567';
const dir = mkdtempSync(join(tmpdir(), 'sf-py-'));
const counter = join(dir, 'calls.txt');

const files: Record<string, string> = {
  'context_echo.py': [
    'def handler(input, context):',
    '    return {"input": input, "secrets": context.secrets, "run": context.run_id, "step": context["stepId"], "workflow": context.workflow}',
  ].join('\n'),
  'fetch_news.py': [
    'import asyncio',
    'async def fetch_news(query: str = "", API_KEY: str = "", **kwargs) -> dict:',
    '    await asyncio.sleep(0)',
    '    return {"query": query, "has_key": API_KEY == "' + SECRET + '", "extra": sorted(kwargs)}',
  ].join('\n'),
  'chatty.py': [
    'import sys',
    'def handler(input, context):',
    '    print("working on", input["topic"], "with", context.secrets["news-key"])',
    '    print("a warning", file=sys.stderr)',
    '    return {"done": True}',
  ].join('\n'),
  'boom.py': ['def handler(input, context):', '    check(input)', '', 'def check(value):', '    raise ValueError("bad input")'].join('\n'),
  'leaky_error.py': ['def handler(input, context):', '    raise RuntimeError("refused key " + context.secrets["news-key"])'].join('\n'),
  'returns_secret.py': 'def handler(input, context):\n    return {"token": context.secrets["news-key"]}\n',
  'returns_set.py': 'def handler(input, context):\n    return {"tags": {"a", "b"}}\n',
  'nothing_to_call.py': 'VALUE = 1\n',
  'broken_import.py': 'import stepforge_no_such_module\n\ndef handler(input, context):\n    return 1\n',
  'counted.py': [
    'def handler(input, context):',
    '    with open(' + JSON.stringify(counter) + ', "a") as f:',
    '        f.write("x\\n")',
    '    return {"n": input["n"]}',
  ].join('\n'),
  'pid.py': 'import os\n\ndef handler(input, context):\n    return os.getpid()\n',
  'crash.py': 'import os, signal\n\ndef handler(input, context):\n    os.kill(os.getpid(), signal.SIGKILL)\n',
  'gate.py': [
    'import asyncio, threading',
    'opened = threading.Event()',
    'async def wait_for_open(**kwargs):',
    '    for _ in range(500):',
    '        if opened.is_set():',
    '            return "saw it open"',
    '        await asyncio.sleep(0.01)',
    '    raise TimeoutError("nobody opened the gate: calls are not served concurrently")',
    'def open_gate(**kwargs):',
    '    opened.set()',
    '    return "opened"',
  ].join('\n'),
  'version.py': 'def handler(input, context):\n    return 1\n',
  'echo.py': 'def handler(input, context):\n    return "python"\n',
  'echo.mjs': 'export default async () => "javascript";\n',
  'text/words.py': 'def words(text="", **kwargs):\n    return len(text.split())\n',
};

const fixture = userFunctionsFixture(dir, files, { STEPFORGE_SECRET_NEWS_KEY: SECRET });
let rt: Runtime;
beforeAll(() => {
  rt = fixture.rt;
});

const call = (module: string, input: unknown = {}, kwargs: Record<string, string> = {}): PythonCall => ({
  module,
  input,
  kwargs,
  context: { secrets: {}, runId: 'run-1', stepId: 'step-1', workflow: 'wf' },
});

/** The runtime's log lines (at INFO) written while `fn` runs. */
async function logged(fn: () => Promise<unknown>): Promise<string> {
  const lines: string[] = [];
  rt.logger.setLogLevel('INFO');
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    await fn();
  } finally {
    spy.mockRestore();
    rt.logger.setLogLevel('SILENT');
  }
  return lines.join('');
}

describe('Class: PythonWorker', () => {
  describe('Method: call', () => {
    it('serves several calls from one long-lived process, concurrently', async () => {
      const worker = new PythonWorker({ command: 'python3', functionsDir: dir });
      try {
        const pids = await Promise.all([worker.call(call('pid.py')), worker.call(call('pid.py')), worker.call(call('pid.py'))]);
        expect(pids.map((a) => a.ok && a.output)).toEqual([pids[0]!.pid, pids[0]!.pid, pids[0]!.pid]);
        expect(worker.pid).toBe(pids[0]!.pid);
        // The first call waits for a second one that was sent after it: served one at a time, it could never finish.
        const waiting = worker.call({ ...call('gate.py'), callable: 'wait_for_open' });
        const opener = worker.call({ ...call('gate.py'), callable: 'open_gate' });
        expect((await Promise.all([waiting, opener])).map((a) => (a.ok ? a.output : a.error.message))).toEqual(['saw it open', 'opened']);
        expect((await worker.call(call('pid.py'))).pid).toBe(pids[0]!.pid);
      } finally {
        await worker.close();
      }
    });

    it('fails the call a crash interrupts with FunctionError, and starts a new worker for the next call', async () => {
      const worker = new PythonWorker({ command: 'python3', functionsDir: dir });
      try {
        const first = await worker.call(call('pid.py'));
        const err = await worker.call(call('crash.py')).catch((e: unknown) => e);
        expect((err as Error).name).toBe('FunctionError');
        expect((err as Error).message).toBe(
          `the Python worker (pid ${first.pid}) was killed by SIGKILL while crash.py was running; the next call starts a new worker`,
        );
        expect(alive(first.pid)).toBe(false);
        const next = await worker.call(call('pid.py'));
        expect(next.ok).toBe(true);
        expect(next.pid).not.toBe(first.pid);
      } finally {
        await worker.close();
      }
    });

    it('names a missing interpreter with ConfigError', async () => {
      const empty = mkdtempSync(join(tmpdir(), 'sf-nopython-'));
      const worker = new PythonWorker({ command: 'python3', functionsDir: dir, env: { PATH: empty } });
      try {
        const err = await worker.call(call('pid.py')).catch((e: unknown) => e);
        expect((err as Error).name).toBe('ConfigError');
        expect((err as Error).message).toBe(
          "cannot run Python user functions: 'python3' was not found on PATH; install Python 3.8 or later, or set STEPFORGE_PYTHON to the interpreter to use",
        );
      } finally {
        await worker.close();
        rmSync(empty, { recursive: true, force: true });
      }
    });

    it('imports a module again once its file changed, and keeps it while it has not', async () => {
      const worker = new PythonWorker({ command: 'python3', functionsDir: dir });
      try {
        expect(await worker.call(call('version.py'))).toMatchObject({ ok: true, output: 1 });
        writeFileSync(join(dir, 'version.py'), 'def handler(input, context):\n    return 22\n');
        // A later modification time even on a file system whose clock is coarse.
        utimesSync(join(dir, 'version.py'), new Date(), new Date(Date.now() + 5000));
        expect(await worker.call(call('version.py'))).toMatchObject({ ok: true, output: 22 });
        expect(await worker.call(call('version.py'))).toMatchObject({ ok: true, output: 22 });
      } finally {
        await worker.close();
      }
    });
  });

  describe('Method: close', () => {
    it('ends the process', async () => {
      const worker = new PythonWorker({ command: 'python3', functionsDir: dir });
      const { pid } = await worker.call(call('pid.py'));
      expect(alive(pid)).toBe(true);
      await worker.close();
      expect(alive(pid)).toBe(false);
      const err = await worker.call(call('pid.py')).catch((e: unknown) => e);
      expect((err as Error).name).toBe('FunctionError');
      expect((err as Error).message).toBe('the Python worker is closed (the stack is shutting down); pid.py did not run');
    });
  });
});

describe('Function: createFunctionHandler (Python)', () => {
  const run = (
    fn: string,
    p: { input?: unknown; secrets?: string[]; secretNames?: Record<string, string>; runId?: string; step?: string } = {},
  ) =>
    createFunctionHandler(rt)(
      envelope({
        kind: 'function',
        step: p.step ?? fn.replace(/\W/g, '_'),
        ...(p.runId ? { runId: p.runId } : {}),
        config: { function: fn, ...(p.secretNames ? { secretNames: p.secretNames } : {}) },
        secrets: p.secrets ?? [],
        inputs: { value: p.input ?? {} },
      }),
    ) as Promise<{ status: string; output: unknown }>;
  const failure = (fn: string, p: Parameters<typeof run>[1] = {}) =>
    run(fn, p).then(
      () => undefined,
      (e: unknown) => e as Error & { stackTrace?: string[] },
    );

  it('calls handler(input, context) with the secrets by id and binding name, the run and the step', async () => {
    const r = await run('context_echo', {
      runId: 'run-py-ctx',
      step: 'echo',
      input: { a: [1, 2] },
      secrets: ['news-key'],
      secretNames: { API_KEY: 'news-key' },
    });
    expect(r.status).toBe('succeeded');
    // The secret's value never leaves the step: redacted in the output it was returned in.
    expect(r.output).toEqual({
      input: { a: [1, 2] },
      secrets: { 'news-key': '***', API_KEY: '***' },
      run: 'run-py-ctx',
      step: 'echo',
      workflow: 'test-wf',
    });
  });

  it('calls an async function named like the module with the input fields and secret bindings as keyword arguments', async () => {
    const r = await run('fetch_news', {
      input: { query: 'stepforge', page: 2 },
      secrets: ['news-key'],
      secretNames: { API_KEY: 'news-key' },
    });
    expect(r.output).toEqual({ query: 'stepforge', has_key: true, extra: ['page'] });
    expect((await run('text/words', { input: { text: 'one two three' } })).output).toBe(3);
  });

  it('keeps print() output out of the result and logs it redacted', async () => {
    let r: { output: unknown } | undefined;
    const log = await logged(async () => {
      r = await run('chatty', { input: { topic: 'tides' }, secrets: ['news-key'] });
    });
    expect(r?.output).toEqual({ done: true });
    const lines = log
      .split('\n')
      .filter((l) => l.includes('"function output"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.stream, l.text])).toEqual([
      ['stdout', 'working on tides with ***\n'],
      ['stderr', 'a warning\n'],
    ]);
    expect(log).not.toContain(SECRET);
  });

  it("turns a raised exception into FunctionError with its type and message, and a trace of the user's frames only", async () => {
    const err = await failure('boom');
    expect(err?.name).toBe('FunctionError');
    expect(err?.message).toBe('function boom threw ValueError: bad input');
    expect(err?.stackTrace).toEqual([
      '  File "boom.py", line 2, in handler\n    check(input)\n',
      '  File "boom.py", line 5, in check\n    raise ValueError("bad input")\n',
    ]);
    expect(JSON.stringify(err?.stackTrace)).not.toContain(dir);
    // The engine reports it in the Python Lambda's error shape, as the deployed Python function Lambda would.
    expect((err as { lambdaRuntime?: string }).lambdaRuntime).toBe('python');
  });

  it('redacts a secret from the output it returned and the error it raised', async () => {
    expect((await run('returns_secret', { secrets: ['news-key'] })).output).toEqual({ token: '***' });
    const err = await failure('leaky_error', { secrets: ['news-key'] });
    expect(err?.message).toBe('function leaky_error threw RuntimeError: refused key ***');
    // The redacted copy still says which runtime raised it.
    expect((err as { lambdaRuntime?: string }).lambdaRuntime).toBe('python');
  });

  it('names what it cannot call or return', async () => {
    expect((await failure('returns_set'))?.message).toBe(
      'function returns_set returned a dict, which is not JSON-serialisable (Object of type set is not JSON serializable): return dicts, lists, strings, numbers, booleans or None',
    );
    expect((await failure('nothing_to_call'))?.message).toBe(
      'function nothing_to_call: nothing_to_call.py defines neither handler(input, context) nor a function named nothing_to_call: define one of them (for example `async def nothing_to_call(**kwargs) -> dict`)',
    );
    expect((await failure('broken_import'))?.message).toBe(
      "function broken_import: importing broken_import.py failed: ModuleNotFoundError: No module named 'stepforge_no_such_module'",
    );
    const notMapping = await failure('fetch_news', { input: ['a'] });
    expect(notMapping?.name).toBe('FunctionError');
    expect(notMapping?.message).toBe(
      "function fetch_news: fetch_news.py takes keyword arguments, but the step's input is a list, not a mapping: give the step an `input:` mapping, or define handler(input, context) to take any input",
    );
  });

  it('returns the committed output on a retry instead of calling the function again', async () => {
    const again = envelope({
      kind: 'function',
      step: 'count',
      runId: 'run-py-idem',
      config: { function: 'counted' },
      inputs: { value: { n: 7 } },
    });
    const h = createFunctionHandler(rt);
    const first = (await h(again)) as { status: string; output: unknown };
    const second = (await h(again)) as { status: string; output: unknown };
    expect([first, second].map((r) => [r.status, r.output])).toEqual([
      ['succeeded', { n: 7 }],
      ['reused', { n: 7 }],
    ]);
    expect(readFileSync(counter, 'utf8')).toBe('x\n');
    const step = await rt.runs.getStep('run-py-idem', 'count');
    expect(step).toMatchObject({ status: 'SUCCEEDED', output: { n: 7 } });
  });

  it('records a raised exception on the step record', async () => {
    await failure('boom', { runId: 'run-py-fail', step: 'b' });
    expect(await rt.runs.getStep('run-py-fail', 'b')).toMatchObject({
      status: 'FAILED',
      error: { name: 'FunctionError', message: 'function boom threw ValueError: bad input' },
    });
  });

  it('runs every Python call of the runtime in one worker process', async () => {
    const pids = [];
    for (let i = 0; i < 3; i++) pids.push((await run('pid', { runId: `run-py-pid-${i}` })).output);
    expect(new Set(pids).size).toBe(1);
    expect(pids[0]).toBe(runtimePythonWorker(rt).pid);
  });

  it('refuses a name that finds both a Python and a JavaScript module, and runs the one an extension names', async () => {
    const err = await failure('echo');
    expect(err?.name).toBe('ConfigError');
    // The folder is outside the working directory here: named, never as an absolute path.
    expect(err?.message).toBe(
      `function "echo" is ambiguous: the functions folder (${basename(dir)}) has both echo.py and echo.mjs; name the one to run with its extension ` +
        '(function: echo.py or function: echo.mjs, declared under functions: with the same name), or remove the other',
    );
    expect((await run('echo.py')).output).toBe('python');
    expect((await run('echo.mjs')).output).toBe('javascript');
  });
});

describe('Function: resolveUserFunction', () => {
  it('finds a Python module, a JavaScript one, and one named with its extension or an export', () => {
    expect(resolveUserFunction(dir, 'text/words')).toEqual({
      language: 'python',
      path: join(dir, 'text', 'words.py'),
      relative: 'text/words.py',
    });
    expect(resolveUserFunction(dir, 'echo.mjs#default')).toEqual({
      language: 'javascript',
      path: join(dir, 'echo.mjs'),
      relative: 'echo.mjs',
      exportName: 'default',
    });
    expect(resolveUserFunction(dir, 'gate#open_gate')).toEqual({
      language: 'python',
      path: join(dir, 'gate.py'),
      relative: 'gate.py',
      exportName: 'open_gate',
    });
  });

  it('names what it looked for, and refuses names outside the folder', () => {
    const refusal = (name: string) => {
      try {
        resolveUserFunction(dir, name);
      } catch (e) {
        return [(e as Error).name, (e as Error).message];
      }
      return undefined;
    };
    expect(refusal('absent')).toEqual([
      'FunctionError',
      `no user function "absent" in ${dir} (looked for absent.py, absent.ts, absent.mts, absent.js, absent.mjs)`,
    ]);
    expect(refusal('absent.py')).toEqual(['FunctionError', `no user function "absent.py" in ${dir} (looked for absent.py)`]);
    expect(refusal('../etc/passwd')).toEqual(['PolicyDenied', 'invalid function name "../etc/passwd"']);
    expect(refusal('gate#open-gate')).toEqual(['PolicyDenied', 'invalid function name "gate#open-gate"']);
  });
});
