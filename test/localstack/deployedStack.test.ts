// End-to-end over the stack deployed into LocalStack (`npm run deploy:local`): starts runs through
// API Gateway, polls them, approves a gated step, and starts a run from an EventBridge event.
// Needs Docker: it skips (with the reason) when LocalStack is not reachable or the stack is not
// deployed, so `npm test` and CI without Docker pass over it cleanly. Run it with `npm run test:localstack`.
import { existsSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';

const ENDPOINT = process.env['LOCALSTACK_ENDPOINT'] ?? 'http://localhost:4566';
const OUTPUTS = fileURLToPath(new URL('../../.stepforge/localstack-outputs.json', import.meta.url));
const STACK = process.env['STEPFORGE_STACK'] ?? 'Stepforge';

async function localstackReachable(): Promise<boolean> {
  try {
    const res = await fetch(`${ENDPOINT}/_localstack/health`, { signal: AbortSignal.timeout(1500) });
    return res.ok;
  } catch {
    return false;
  }
}

const reachable = await localstackReachable();
const deployed = reachable && existsSync(OUTPUTS);
const skipReason = !reachable
  ? `LocalStack is not reachable at ${ENDPOINT}: start it with \`docker compose -f localstack-compose.yml up -d\`, then \`npm run deploy:local\` (needs Docker)`
  : !deployed
    ? `the stack is not deployed (no ${OUTPUTS}): run \`npm run deploy:local\``
    : '';
if (skipReason) console.warn(`[test:localstack] skipped: ${skipReason}`);

interface Outputs {
  readonly RestApiId: string;
  readonly ApiStage: string;
}

let api: (method: 'GET' | 'POST', path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: any }>;

/** Poll `fn` until it returns a value that is not undefined (or time out with what was seen last). */
async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

const finished = (status: unknown) =>
  typeof status === 'string' && !['RUNNING', 'PENDING', 'WAITING', 'STARTED'].includes(status.toUpperCase());
const runIdOf = (body: any): string => body?.runId ?? body?.id ?? body?.run?.id;

describe.skipIf(!deployed)(`LocalStack: deployed stack${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  beforeAll(() => {
    const all = JSON.parse(readFileSync(OUTPUTS, 'utf8')) as Record<string, Outputs>;
    const out = all[STACK];
    if (!out) throw new Error(`${OUTPUTS} has no outputs for stack ${STACK}`);
    // LocalStack's path-style API Gateway URL works without DNS for *.localstack.cloud.
    const base = `${ENDPOINT}/restapis/${out.RestApiId}/${out.ApiStage}/_user_request_`;
    api = async (method, path, body, headers = {}) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // leave as text
      }
      return { status: res.status, body: parsed };
    };
  });

  it('lists the deployed workflows', async () => {
    const res = await api('GET', '/workflows');
    expect(res.status).toBe(200);
    const names = JSON.stringify(res.body);
    for (const wf of ['research-brief', 'order-triage', 'refund-approval']) expect(names).toContain(wf);
  });

  it('starts a run through API Gateway, polls it to success, and returns the same run for the same key', async () => {
    const key = `e2e-${randomUUID()}`;
    const started = await api('POST', '/workflows/research-brief/runs', { input: { topic: 'tide pools' } }, { 'Idempotency-Key': key });
    expect([200, 201, 202]).toContain(started.status);
    const runId = runIdOf(started.body);
    expect(runId).toBeTruthy();
    const run = await until('research-brief to finish', async () => {
      const r = await api('GET', `/runs/${encodeURIComponent(runId)}`);
      return finished(r.body?.status) ? r.body : undefined;
    });
    expect(run.status).toBe('SUCCEEDED');
    const again = await api('POST', '/workflows/research-brief/runs', { input: { topic: 'tide pools' } }, { 'Idempotency-Key': key });
    expect(runIdOf(again.body)).toBe(runId);
  });

  it('rejects a malformed request body at the gateway (request validation)', async () => {
    const res = await api('POST', '/approvals/does-not-exist', { decision: 'maybe' });
    expect(res.status).toBe(400);
  });

  it('pauses on a gated tool call and continues once the approval is granted', async () => {
    const started = await api('POST', '/workflows/refund-approval/runs', { input: { customer: 'c-42', amount: 12 } });
    const runId = runIdOf(started.body);
    expect(runId).toBeTruthy();
    const approval = await until('an approval request for the run', async () => {
      const r = await api('GET', '/approvals');
      const list: any[] = Array.isArray(r.body) ? r.body : (r.body?.approvals ?? r.body?.items ?? []);
      return list.find((a) => a.runId === runId);
    });
    const id: string = approval.approvalId ?? approval.id;
    const decided = await api('POST', `/approvals/${encodeURIComponent(id)}`, { decision: 'approve', comment: 'e2e' });
    expect([200, 202]).toContain(decided.status);
    const run = await until('refund-approval to finish', async () => {
      const r = await api('GET', `/runs/${encodeURIComponent(runId)}`);
      return finished(r.body?.status) ? r.body : undefined;
    });
    // After approval the refund step ran (the payments host is not reachable from LocalStack, so the
    // run may fail in http_fetch); what must not happen is a rejection or an approval timeout.
    expect(JSON.stringify(run)).not.toMatch(/ApprovalRejected|ApprovalTimedOut/);
    const after = await api('GET', '/approvals');
    const list: any[] = Array.isArray(after.body) ? after.body : (after.body?.approvals ?? after.body?.items ?? []);
    expect(list.find((a) => (a.approvalId ?? a.id) === id && String(a.status).toUpperCase() === 'PENDING')).toBeUndefined();
  });

  it('starts a run from an EventBridge event, with the event id as idempotency key', async () => {
    const eb = new EventBridgeClient({
      endpoint: ENDPOINT,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    const orderId = `o-${randomUUID()}`;
    const put = await eb.send(
      new PutEventsCommand({
        Entries: [{ Source: 'acme.orders', DetailType: 'OrderPlaced', Detail: JSON.stringify({ order: { id: orderId, total: 99 } }) }],
      }),
    );
    const eventId = put.Entries?.[0]?.EventId;
    expect(eventId).toBeTruthy();
    const run = await until('a run started by the event', async () => {
      const r = await api('GET', '/workflows/order-triage/runs');
      const list: any[] = Array.isArray(r.body) ? r.body : (r.body?.runs ?? r.body?.items ?? []);
      return list.find((x) => x.idempotencyKey === eventId || JSON.stringify(x).includes(orderId));
    });
    expect(run.idempotencyKey).toBe(eventId);
    // order-triage is an Express workflow: Step Functions cannot describe Express executions, so the
    // run's progress is read from the step records the handlers write.
    const progressed = await until('order-triage to record its classify step', async () => {
      const r = await api('GET', `/runs/${encodeURIComponent(runIdOf(run))}`);
      const steps: any[] = r.body?.steps ?? [];
      return steps.some((st) => String(st.stepId ?? st.id ?? '').startsWith('classify') && String(st.status).toUpperCase() === 'SUCCEEDED')
        ? r.body
        : undefined;
    });
    expect(progressed.workflow).toBe('order-triage');
  });
});
