// Crash test: the handler process is SIGKILLed between dispatch (the outside call has left) and
// commit. A loopback server counts the calls. The re-run must not repeat a non-idempotent call
// (it fails with StepOutcomeUnknown, saying what to check); an idempotent call (http connector
// with an Idempotency-Key) is repeated with the same key, so the target applies it once.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnectorHandler } from '../src/handlers/connector.js';
import { settleUnknownOutcome } from '../src/runtime/runIdempotent.js';
import type { Runtime } from '../src/runtime/Runtime.js';
import { envelope } from './envelope.js';
import { json, makeRuntime, startDynalite, startHttpServer, type DynamoEndpoint } from './emulators.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const childScript = fileURLToPath(new URL('./fixtures/crashChild.ts', import.meta.url));

let ddb: DynamoEndpoint;
let rt: Runtime;
let target: Awaited<ReturnType<typeof startHttpServer>>;
let holdFirst = true;
let onFirst: (() => void) | undefined;
const appliedKeys = new Set<string>();

beforeAll(async () => {
  ddb = await startDynalite();
  target = await startHttpServer((req, res) => {
    if (holdFirst) {
      // Hold the first request open: the child is killed while waiting for this answer.
      holdFirst = false;
      onFirst?.();
      return;
    }
    const key = req.headers['idempotency-key'];
    if (typeof key === 'string') appliedKeys.add(key);
    json(res, 200, { ok: true });
  });
  // The target is a loopback server: outbound calls reach it only when its host is allow-listed.
  rt = await makeRuntime(
    ddb.endpoint,
    { leaseSeconds: 1, connectors: { slackApiUrl: 'https://slack.invalid/api', slackWebhookUrl: `${target.url}/slack` } },
    {},
    { STEPFORGE_HTTP_ALLOW_HOSTS: new URL(target.url).host },
  );
});
afterAll(async () => {
  await rt.close();
  await target.close();
  await ddb.stop();
});

function runChild(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', childScript], {
    cwd: repoRoot,
    env: { ...process.env, ...env, STEPFORGE_LOG_LEVEL: 'SILENT' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function crashDuringCall(stepEnv: unknown): Promise<void> {
  holdFirst = true;
  const reached = new Promise<void>((r) => {
    onFirst = r;
  });
  const child = runChild({
    STEPFORGE_DYNAMODB_ENDPOINT: ddb.endpoint,
    STEPFORGE_TABLE: rt.config.tableName,
    STEPFORGE_LEASE_SECONDS: '1',
    STEPFORGE_SLACK_WEBHOOK_URL: `${target.url}/slack`,
    STEPFORGE_HTTP_ALLOW_HOSTS: new URL(target.url).host,
    CRASH_ENVELOPE: JSON.stringify(stepEnv),
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await Promise.race([
    reached,
    exited.then(() => {
      throw new Error(`child exited before the call: ${stderr}`);
    }),
  ]);
  child.kill('SIGKILL');
  await exited;
  // Let the child's 1 s lease run out.
  await new Promise((r) => setTimeout(r, 1200));
}

describe('Crash: handler killed between dispatch and commit', () => {
  it('does not repeat a non-idempotent call (Slack webhook): the re-run fails with StepOutcomeUnknown', async () => {
    const env = envelope({
      kind: 'connector',
      step: 'notify',
      runId: 'run-crash-1',
      config: { connector: 'slack', action: 'send_message' },
      inputs: { value: { text: 'deploy done' } },
    });
    await crashDuringCall(env);
    const before = target.requests.filter((r) => r.url === '/slack').length;
    expect(before).toBe(1);
    const rerun = createConnectorHandler(rt);
    const err = await rerun(env).catch((e: unknown) => e);
    expect((err as Error).name).toBe('StepOutcomeUnknown');
    expect((err as Error).message).toMatch(
      /^step notify called slack incoming webhook at \S+ and never recorded the outcome .*check slack incoming webhook for that request/,
    );
    expect(target.requests.filter((r) => r.url === '/slack')).toHaveLength(1);
    // It stays refused: a second re-run does not call either.
    expect(((await rerun(env).catch((e: unknown) => e)) as Error).name).toBe('StepOutcomeUnknown');
    expect(target.requests.filter((r) => r.url === '/slack')).toHaveLength(1);
    expect((await rt.runs.getStep('run-crash-1', 'notify'))?.status).toBe('FAILED');
    // A person checked Slack and found nothing: settling with "retry" lets the next run call once more.
    await settleUnknownOutcome(rt.idempotency, (err as { details: { key: string } }).details.key, { action: 'retry' });
    const settled = (await rerun(env)) as { status: string; output: unknown };
    expect(settled).toMatchObject({ status: 'succeeded', output: { ok: true, via: 'webhook' } });
    expect(target.requests.filter((r) => r.url === '/slack')).toHaveLength(2);
  }, 60_000);

  it('repeats an idempotent call (http + Idempotency-Key) with the same key, so the effect happens once', async () => {
    const env = envelope({
      kind: 'connector',
      step: 'webhook',
      runId: 'run-crash-2',
      config: { connector: 'http', action: 'request' },
      inputs: { value: { url: `${target.url}/hook`, body: { n: 1 } } },
    });
    await crashDuringCall(env);
    const rerun = createConnectorHandler(rt);
    const r = (await rerun(env)) as { status: string; output: { status: number; idempotencyKey: string } };
    expect(r.status).toBe('succeeded');
    const hooks = target.requests.filter((x) => x.url === '/hook');
    expect(hooks).toHaveLength(2);
    expect(hooks[0]?.headers['idempotency-key']).toBe(hooks[1]?.headers['idempotency-key']);
    expect(appliedKeys.size).toBe(1);
    expect(r.output.idempotencyKey).toBe(hooks[0]?.headers['idempotency-key']);
    // And once committed, a further re-run returns the stored output without calling.
    const again = (await rerun(env)) as { status: string };
    expect(again.status).toBe('reused');
    expect(target.requests.filter((x) => x.url === '/hook')).toHaveLength(2);
  }, 60_000);
});
