// The Python function Lambda's bootstrap (packages/runtime/python/stepforge_lambda.py), run by real python3
// against dynalite as the Lambda runtime runs it (one process = one container, one event after
// another). It must speak the Node function handler's contract: the same envelope in, the same
// StepResult out, the same step records, idempotency records and BLOB# items, which the Node runtime
// reads back here, and the same error names and redaction.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { StepEnvelope, type StepEnvelopeInput } from '@stepforge/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { createFunctionHandler } from '../src/handlers/function.js';
import { stepIdempotencyKey } from '../src/runtime/executeStep.js';
import type { Runtime } from '../src/runtime/Runtime.js';
import { pythonSourceDir } from '../src/userfn/pythonSourceDir.js';
import { envelope } from './envelope.js';
import { userFunctionsFixture, type DynamoEndpoint } from './emulators.js';

const DRIVER = fileURLToPath(new URL('./fixtures/lambdaDriver.py', import.meta.url));
const SECRET = 'weather-key-31415926';
const dir = mkdtempSync(join(tmpdir(), 'sf-pylambda-'));
const counter = join(dir, 'calls.txt');

const FUNCTIONS: Record<string, string> = {
  'forecast.py': [
    'async def forecast(city: str = "", API_KEY: str = "", **kwargs) -> dict:',
    '    print("asking for", city, "with", API_KEY)',
    '    return {"city": city, "authorised": API_KEY == "' + SECRET + '", "extra": sorted(kwargs)}',
  ].join('\n'),
  'context_echo.py':
    'def handler(input, context):\n    return {"input": input, "run": context.run_id, "step": context.step_id, "secrets": sorted(context.secrets)}\n',
  'counted.py': [
    'def handler(input, context):',
    '    with open(' + JSON.stringify(counter) + ', "a") as f:',
    '        f.write("x\\n")',
    '    return {"n": input["n"]}',
  ].join('\n'),
  'boom.py': 'def handler(input, context):\n    raise ValueError("bad input")\n',
  'big.py': 'def handler(input, context):\n    return {"text": "é" * input["n"]}\n',
  'leak.py': 'def handler(input, context):\n    raise RuntimeError("key was " + context.secrets["weather-key"])\n',
  'uses_helper.py': 'import helpers\n\ndef handler(input, context):\n    return helpers.shout(input)\n',
  'helpers.py': 'def shout(text):\n    return text.upper()\n',
};

const fixture = userFunctionsFixture(dir, FUNCTIONS, { STEPFORGE_SECRET_WEATHER_KEY: SECRET });
let rt: Runtime;
let ddb: DynamoEndpoint;
beforeAll(() => {
  ({ rt, ddb } = fixture);
});

type Answer =
  | { ok: true; result: { status: string; output: unknown; outputRef?: { ref: string; bytes: number; sha256: string }; usage: unknown } }
  | { ok: false; errorType: string; errorMessage: string };

/** Whether this python3 has boto3 (the Lambda runtime has): then the bootstrap is tested with it and without it. */
const hasBoto3 = await new Promise<boolean>((r) => execFile('python3', ['-c', 'import boto3'], (err) => r(!err)));
let client: 'boto3' | 'loopback' = 'loopback';

/** Invokes the bootstrap with each event in turn in one python3 process: the answers and the log lines. */
function invoke(...events: unknown[]): Promise<{ answers: Answer[]; log: string[] }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'python3',
      ['-B', DRIVER],
      {
        env: {
          PATH: process.env.PATH,
          STEPFORGE_PYTHON_SOURCE: pythonSourceDir(),
          STEPFORGE_TABLE: rt.config.tableName,
          STEPFORGE_DYNAMODB_ENDPOINT: ddb.endpoint,
          STEPFORGE_FUNCTIONS_DIR: dir,
          STEPFORGE_SECRETS_BACKEND: 'env',
          STEPFORGE_SECRET_WEATHER_KEY: SECRET,
          AWS_REGION: 'us-east-1',
          STEPFORGE_MODE: 'aws',
          ...(client === 'boto3' ? { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' } : { DRIVER_WITHOUT_BOTO3: '1' }),
        },
      },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${err.message}\n${stderr}`));
        const lines = stdout.split('\n').filter(Boolean);
        resolve({
          answers: lines.filter((l) => l.startsWith('@@result ')).map((l) => JSON.parse(l.slice(9)) as Answer),
          log: lines.filter((l) => !l.startsWith('@@result ')),
        });
      },
    );
    child.stdin!.end(events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  });
}

const fn = (
  name: string,
  p: Partial<Parameters<typeof envelope>[0]> & { secretNames?: Record<string, string>; readByStateMachine?: true } = {},
): StepEnvelopeInput => {
  const { secretNames, readByStateMachine, ...rest } = p;
  const e = envelope({
    kind: 'function',
    step: name,
    ...rest,
    config: { function: name, ...(secretNames ? { secretNames } : {}), ...rest.config },
  });
  return { ...e, ...(readByStateMachine ? { readByStateMachine } : {}) };
};

const CLIENTS: readonly (readonly [string, 'boto3' | 'loopback'])[] = [
  ['its loopback DynamoDB client (no boto3)', 'loopback'],
  ...(hasBoto3 ? [['boto3', 'boto3'] as const] : []),
];

describe.each(CLIENTS)('Module: stepforge_lambda (the Python function Lambda), with %s', (_label, mode) => {
  beforeAll(() => {
    client = mode;
    writeFileSync(counter, '');
  });
  const runId = (n: string) => `run-${mode}-${n}`;

  it('answers a StepResult and records the step as the Node runtime records it', async () => {
    const e = fn('context_echo', { runId: runId('1'), step: 'echo', inputs: { value: { a: 1 } }, secrets: ['weather-key'] });
    const { answers } = await invoke(e);
    expect(answers).toEqual([
      {
        ok: true,
        result: {
          status: 'succeeded',
          output: { input: { a: 1 }, run: runId('1'), step: 'echo', secrets: ['weather-key'] },
          usage: { inputTokens: 0, outputTokens: 0 },
        },
      },
    ]);
    expect(await rt.runs.getStep(runId('1'), 'echo')).toMatchObject({
      status: 'SUCCEEDED',
      attempts: 1,
      output: { input: { a: 1 }, run: runId('1'), step: 'echo' },
    });
    // The idempotency record sits on the step record under the key the Node runtime computes for this envelope.
    const item = (
      await rt.db.doc.send(new GetCommand({ TableName: rt.config.tableName, Key: { pk: `RUN#${runId('1')}`, sk: 'STEP#echo' } }))
    ).Item!;
    expect(item.idem).toMatchObject({ key: stepIdempotencyKey(StepEnvelope.parse(e)), status: 'COMPLETED' });
  });

  it('hashes the request as the Node runtime does, numbers and text included', async () => {
    const inputs = {
      value: { b: [0.1, 1e21, 1e-7, 5, -0.000001, 123456789012345680000, 2.5e-100, 1.5e100], a: 'é😀\u0001"\\', Z: { y: null, x: true } },
    };
    const e = fn('context_echo', { runId: runId('hash'), step: 'hash', inputs, iteration: [2, 0] });
    const { answers } = await invoke(e);
    expect(answers[0]).toMatchObject({ ok: true, result: { status: 'succeeded' } });
    const item = (
      await rt.db.doc.send(new GetCommand({ TableName: rt.config.tableName, Key: { pk: `RUN#${runId('hash')}`, sk: 'STEP#hash[2,0]' } }))
    ).Item!;
    expect(item.idem.key).toBe(stepIdempotencyKey(StepEnvelope.parse(e)));
  });

  it("calls a function GraphN's way with its secret binding, and keeps the secret out of the result and the log", async () => {
    const e = fn('forecast', {
      runId: runId('2'),
      inputs: { value: { city: 'Oslo', days: 3 } },
      secrets: ['weather-key'],
      secretNames: { API_KEY: 'weather-key' },
    });
    const { answers, log } = await invoke(e);
    expect(answers).toMatchObject([
      { ok: true, result: { status: 'succeeded', output: { city: 'Oslo', authorised: true, extra: ['days'] } } },
    ]);
    const printed = log.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.message === 'function output');
    expect(printed.map((l) => [l.stream, l.text, l.runId])).toEqual([['stdout', 'asking for Oslo with ***\n', runId('2')]]);
    expect(log.join('\n')).toContain('"message": "step finished"');
    expect(log.join('\n')).not.toContain(SECRET);
  });

  it('returns the committed output on a retry, in another container too, without calling the function again', async () => {
    const e = fn('counted', { runId: runId('3'), inputs: { value: { n: 4 } } });
    const first = await invoke(e, e);
    const later = await invoke(e);
    expect([...first.answers, ...later.answers].map((a) => a.ok && [a.result.status, a.result.output])).toEqual([
      ['succeeded', { n: 4 }],
      ['reused', { n: 4 }],
      ['reused', { n: 4 }],
    ]);
    expect(readFileSync(counter, 'utf8')).toBe('x\n');
  });

  it('reuses what the Node function handler committed for the same step, and the Node handler what it committed', async () => {
    writeFileSync(counter, '');
    const e = fn('counted', { runId: runId('4'), inputs: { value: { n: 9 } } });
    const node = (await createFunctionHandler(rt)(e)) as { status: string };
    expect(node.status).toBe('succeeded');
    const { answers } = await invoke(e);
    expect(answers).toMatchObject([{ ok: true, result: { status: 'reused', output: { n: 9 } } }]);
    const other = fn('counted', { runId: runId('5'), inputs: { value: { n: 10 } } });
    expect((await invoke(other)).answers).toMatchObject([{ ok: true, result: { status: 'succeeded' } }]);
    expect(await createFunctionHandler(rt)(other)).toMatchObject({ status: 'reused', output: { n: 10 } });
    expect(readFileSync(counter, 'utf8')).toBe('x\nx\n');
  });

  it("fails with FunctionError carrying the exception's type and message, recorded on the step", async () => {
    const { answers } = await invoke(fn('boom', { runId: runId('6'), step: 'b' }));
    expect(answers).toEqual([{ ok: false, errorType: 'FunctionError', errorMessage: 'function boom threw ValueError: bad input' }]);
    expect(await rt.runs.getStep(runId('6'), 'b')).toMatchObject({
      status: 'FAILED',
      attempts: 1,
      error: { name: 'FunctionError', message: 'function boom threw ValueError: bad input' },
    });
    const leak = await invoke(fn('leak', { runId: runId('7'), secrets: ['weather-key'] }));
    expect(leak.answers).toEqual([
      { ok: false, errorType: 'FunctionError', errorMessage: 'function leak threw RuntimeError: key was ***' },
    ]);
    expect(leak.log.join('\n')).not.toContain(SECRET);
    expect(JSON.stringify(await rt.runs.getStep(runId('7'), 'leak'))).not.toContain(SECRET);
  });

  it('stores a large output by reference as BLOB# chunks the Node runtime reads, and resolves references in its input', async () => {
    const { answers } = await invoke(fn('big', { runId: runId('8'), inputs: { value: { n: 5000 } } }));
    const a = answers[0]!;
    if (!a.ok) throw new Error(a.errorMessage);
    expect(a.result.output).toEqual({ $ref: a.result.outputRef });
    expect(a.result.outputRef!.bytes).toBe(Buffer.byteLength(JSON.stringify({ text: 'é'.repeat(5000) })));
    expect(await rt.blobs.get(a.result.outputRef!)).toEqual({ text: 'é'.repeat(5000) });
    expect(await rt.runs.getStep(runId('8'), 'big')).toMatchObject({ status: 'SUCCEEDED', outputRef: a.result.outputRef!.ref });
    // A reference the Node runtime stored, as the next step's input.
    const ref = await rt.blobs.put(JSON.stringify('shout this'));
    const up = await invoke(fn('uses_helper', { runId: runId('9'), inputs: { value: { $ref: ref } } }));
    expect(up.answers).toMatchObject([{ ok: true, result: { output: 'SHOUT THIS' } }]);
  });

  it("stores an output by reference above the envelope's lower inline limit (a for_each iteration's), and refuses a malformed one", async () => {
    // 600 bytes: inline under the runtime's 4 KiB, by reference under the iteration's 512 bytes.
    const { answers } = await invoke(
      { ...fn('big', { runId: runId('11'), inputs: { value: { n: 290 } } }), inlineOutputMaxBytes: 512 },
      { ...fn('big', { runId: runId('12'), inputs: { value: { n: 290 } } }) },
      { ...fn('big', { runId: runId('13'), inputs: { value: { n: 1 } } }), inlineOutputMaxBytes: 0 },
    );
    const [low, plain, bad] = answers;
    if (!low!.ok || !plain!.ok) throw new Error('expected both calls to succeed');
    expect(low!.result.output).toEqual({ $ref: low!.result.outputRef });
    expect(await rt.blobs.get(low!.result.outputRef!)).toEqual({ text: 'é'.repeat(290) });
    expect(plain!.result.output).toEqual({ text: 'é'.repeat(290) });
    expect(bad).toEqual({
      ok: false,
      errorType: 'InvalidEnvelope',
      errorMessage: 'malformed step envelope: inlineOutputMaxBytes: expected a positive integer',
    });
  });

  it('refuses an output the state machine reads that is over 32 KiB, and a malformed envelope, by name', async () => {
    const { answers } = await invoke(fn('big', { runId: runId('10'), inputs: { value: { n: 20000 } }, readByStateMachine: true }), {
      version: 2,
      run: { id: '' },
      step: { id: 's', kind: 'script' },
      config: {},
      inputs: {},
    });
    expect(answers[0]).toMatchObject({ ok: false, errorType: 'OutputTooLarge' });
    expect((answers[0] as { errorMessage: string }).errorMessage).toMatch(
      /^step 'big' returned 40 KiB, but the state machine reads its output itself/,
    );
    expect(answers[1]).toEqual({
      ok: false,
      errorType: 'InvalidEnvelope',
      errorMessage:
        'malformed step envelope: run.id: expected a non-empty string; run.workflow: expected a non-empty string; step.identity: expected a non-empty string; ' +
        'step.kind: expected one of model, agent, tool, connector, function, mcp_tool',
    });
  });
});
