// Python function steps end to end through the CLI and the embedded stack, with real python3: a sync
// handler(input, context), an async function called GraphN's way (input fields and secret bindings as
// keyword arguments), print() inside a function, a raised exception, python3 missing from PATH, and
// one worker process serving every call of a run and ending with the command.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '@stepforge/cli';
import { bufferIo, REPO, spawnStepforge, tempProject } from './support/testIo.js';
import { isProcessAlive as alive } from '../support/isProcessAlive.js';

const SECRET = 'news-key-value-0042';
const bundled = existsSync(join(REPO, 'packages', 'cli', 'dist', 'bundle', 'stepforge.cjs'));

const FUNCTIONS: Record<string, string> = {
  'summarise.py': [
    '# handler(input, context): the input as it is, and the run and step it serves',
    'def handler(input, context):',
    '    print("summarising", len(input["items"]), "items for", context.run_id)',
    '    return {"count": len(input["items"]), "step": context.step_id}',
  ].join('\n'),
  'fetch_news.py': [
    "# GraphN's way: the input fields and the step's secret bindings as keyword arguments",
    'import asyncio',
    'async def fetch_news(query: str = "", API_KEY: str = "", **kwargs) -> dict:',
    '    await asyncio.sleep(0)',
    '    print("calling the news API with", API_KEY)',
    '    return {"headlines": [query + " rises", query + " falls"], "authorised": API_KEY == "' + SECRET + '"}',
  ].join('\n'),
  'worker_pid.py': 'import os\n\ndef worker_pid(item=None, **kwargs):\n    return {"item": item, "pid": os.getpid()}\n',
  'validate.py': [
    'def handler(input, context):',
    '    if not input.get("ok"):',
    '        raise ValueError("bad input")',
    '    return input',
  ].join('\n'),
};

/** A DSL document with the given steps (each `NAME:` with `call: function`). */
function workflow(name: string, functions: string[], steps: string[]): string {
  return [
    `document: { dsl: "1.0", name: ${name}, version: "0.1.0" }`,
    `functions: { ${functions.map((f) => `${f}: {}`).join(', ')} }`,
    'secrets:',
    '  news: $secret:news-key',
    'steps:',
    ...steps,
    '',
  ].join('\n');
}

const NEWS = workflow(
  'py-news',
  ['fetch_news', 'summarise'],
  [
    '  fetch:',
    '    call: function',
    '    function: fetch_news',
    '    secrets: { API_KEY: news }',
    '    input: { query: "${ input.topic }" }',
    '  summary:',
    '    call: function',
    '    function: summarise',
    '    input: { items: "${ steps.fetch.output.headlines }" }',
  ],
);
const PIDS = workflow(
  'py-pids',
  ['worker_pid'],
  [
    '  each:',
    '    call: for_each',
    '    items: ${ input.items }',
    '    do:',
    '      pid:',
    '        call: function',
    '        function: worker_pid',
    '        input: { item: "${ input.item }" }',
  ],
);
const FAILING = workflow(
  'py-fails',
  ['validate'],
  ['  check:', '    call: function', '    function: validate', '    input: { ok: false }'],
);

const project = tempProject('sf-py-e2e-');

beforeAll(() => {
  mkdirSync(join(project.dir, 'functions', 'user'), { recursive: true });
  for (const [file, text] of Object.entries(FUNCTIONS)) writeFileSync(join(project.dir, 'functions', 'user', file), `${text}\n`);
  writeFileSync(join(project.dir, 'news.yaml'), NEWS);
  writeFileSync(join(project.dir, 'pids.yaml'), PIDS);
  writeFileSync(join(project.dir, 'fails.yaml'), FAILING);
});
afterAll(() => project.remove());

/** `stepforge ARGV` in-process, with `env` as the command's environment; `log` holds the runtime's log lines (written to stdout). */
async function stepforge(env: Record<string, string>, ...argv: string[]) {
  const io = bufferIo(project.dir, { STEPFORGE_SECRET_NEWS_KEY: SECRET, ...env });
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    const code = await main(argv, io);
    return { code, out: io.stdout(), err: io.stderr(), log: lines.join('') };
  } finally {
    spy.mockRestore();
  }
}

/** `runs show ID --json`: the run's error and its steps' errors and outputs. */
async function shown(runId: string) {
  const r = await stepforge({}, 'runs', 'show', runId, '--json');
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as {
    run: { status: string; error?: { name: string; message: string } };
    steps: { id: string; status: string; error?: { error: string; cause: string }; records: { status: string; output: unknown }[] }[];
  };
}

describe('CLI: Python function steps on the embedded stack', () => {
  it('runs a sync handler and an async keyword-argument function with its secret, print() inside both', async () => {
    const r = await stepforge({ STEPFORGE_LOG_LEVEL: 'INFO' }, 'run', 'news.yaml', '--input', '{"topic":"tide"}', '--json');
    expect(r.code).toBe(0);
    const result = JSON.parse(r.out) as { runId: string; status: string; output: unknown };
    expect(result.status).toBe('SUCCEEDED');
    expect(result.output).toEqual({ count: 2, step: 'summary' });
    // print() reached the log (redacted), not the protocol nor the result.
    const printed = r.log
      .split('\n')
      .filter((l) => l.includes('"function output"'))
      .map((l) => (JSON.parse(l) as { text: string }).text);
    expect(printed).toEqual(['calling the news API with ***\n', `summarising 2 items for ${result.runId}\n`]);
    expect(r.out + r.err + r.log).not.toContain(SECRET);
    const { steps } = await shown(result.runId);
    // `runs show --json` gives each record's output as the JSON text it displays.
    expect(steps.map((s) => [s.id, s.status, s.records.map((x) => [x.status, JSON.parse(String(x.output))])])).toEqual([
      ['fetch', 'succeeded', [['SUCCEEDED', { headlines: ['tide rises', 'tide falls'], authorised: true }]]],
      ['summary', 'succeeded', [['SUCCEEDED', { count: 2, step: 'summary' }]]],
    ]);
  }, 120_000);

  it("fails the run with FunctionError carrying the Python exception's type and message, and no path of this machine", async () => {
    const r = await stepforge({}, 'run', 'fails.yaml', '--json');
    expect(r.code).toBe(1);
    const { runId, status } = JSON.parse(r.out) as { runId: string; status: string };
    expect(status).toBe('FAILED');
    const { run, steps } = await shown(runId);
    expect(run.error).toEqual({ name: 'FunctionError', message: "step 'check' failed: function validate threw ValueError: bad input" });
    // The execution's cause, as the history keeps it: the user's own frames, relative to functions/user.
    const cause = JSON.parse(steps[0]!.error!.cause) as { errorType: string; errorMessage: string; stackTrace: string[] };
    // In the Python Lambda runtime's shape and text (json.dumps), as the deployed Python function Lambda reports it.
    expect(Object.keys(cause)).toEqual(['errorMessage', 'errorType', 'requestId', 'stackTrace']);
    expect(
      steps[0]!.error!.cause.startsWith(
        '{"errorMessage": "function validate threw ValueError: bad input", "errorType": "FunctionError", "requestId": "',
      ),
    ).toBe(true);
    expect(cause).toMatchObject({
      errorType: 'FunctionError',
      errorMessage: 'function validate threw ValueError: bad input',
      stackTrace: ['  File "validate.py", line 3, in handler\n    raise ValueError("bad input")\n'],
    });
    const history = readdirSync(join(project.dir, '.stepforge', 'engine'), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'))
      .join('\n');
    expect(history).toContain('function validate threw ValueError: bad input');
    expect(history).not.toContain(join(project.dir, 'functions'));
    expect(history).not.toContain(join(REPO, 'packages', 'runtime', 'python'));
  }, 120_000);

  it('names a missing python3 with ConfigError', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'sf-no-python-'));
    try {
      const r = await stepforge({ PATH: empty }, 'run', 'fails.yaml', '--json');
      expect(r.code).toBe(1);
      const { run } = await shown((JSON.parse(r.out) as { runId: string }).runId);
      expect(run.error).toEqual({
        name: 'ConfigError',
        message:
          "step 'check' failed: cannot run Python user functions: 'python3' was not found on PATH; install Python 3.8 or later, or set STEPFORGE_PYTHON to the interpreter to use",
      });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  }, 120_000);

  it('ends the worker when the command closes its stack, in a process that goes on', async () => {
    const r = await stepforge({}, 'run', 'pids.yaml', '--input', '{"items":["a","b"]}', '--json');
    expect(r.code).toBe(0);
    const output = (JSON.parse(r.out) as { output: { item: string; pid: number }[] }).output;
    expect(output.map((o) => o.item)).toEqual(['a', 'b']);
    expect(output[0]!.pid).toBe(output[1]!.pid);
    expect(alive(output[0]!.pid)).toBe(false);
  }, 120_000);

  it.skipIf(!bundled)(
    'serves every call of a run from one worker process, which ends with the command',
    async () => {
      const r = await spawnStepforge(project.dir, { ...process.env, STEPFORGE_LOG_LEVEL: 'SILENT' }, [
        'run',
        'pids.yaml',
        '--input',
        '{"items":["a","b","c","d"]}',
        '--json',
      ]);
      // With --json, stderr carries only the line saying which approval policy is in force.
      expect(r.stderr).toBe('policy: none (no policy.json found; every granted tool call is allowed)\n');
      expect(r.code).toBe(0);
      const output = (JSON.parse(r.stdout) as { output: { item: string; pid: number }[] }).output;
      expect(output.map((o) => o.item)).toEqual(['a', 'b', 'c', 'd']);
      const pids = new Set(output.map((o) => o.pid));
      expect(pids.size).toBe(1);
      // The command has exited (execFile returned): its worker went with it.
      expect(alive([...pids][0]!)).toBe(false);
    },
    120_000,
  );
});
