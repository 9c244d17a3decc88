import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { SFNClient, ListStateMachinesCommand } from '@aws-sdk/client-sfn';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../../packages/embedded/src/RunService.js';
import { openApiDocument } from '@stepforge/contract';
import { startServe, type ServeHandle } from '../../packages/cli/src/commands/serve.js';
import { REPO, bufferIo, tempProject } from './support/testIo.js';

describe('Command: serve (the HTTP API through fetch)', () => {
  const project = tempProject();
  let stack: EmbeddedStack;
  let handle: ServeHandle;
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; json: any }>;
  beforeAll(async () => {
    cpSync(join(REPO, 'examples'), join(project.dir, 'examples'), { recursive: true });
    stack = await openStack({ projectDir: project.dir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
    const io = bufferIo(project.dir);
    handle = await startServe(io, new EmbeddedRunService(stack, project.dir), 0);
    expect(io.stderr()).toBe('');
    api = async (method, path, body, headers = {}) => {
      const r = await fetch(`${handle.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${handle.token}`, ...headers },
        ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      });
      return { status: r.status, json: await r.json() };
    };
  });
  const auth = () => ({ authorization: `Bearer ${handle.token}` });
  afterAll(async () => {
    await handle.close();
    await stack.close();
    project.remove();
  });

  it('answers input nested 10,000 deep with 400 input_too_deep, not a 500, and records no run', async () => {
    const before = (await api('GET', '/workflows/quickstart/runs')).json.runs.length;
    const body = `{"input": {"topic": "tides", "x": ${'['.repeat(10_000)}1${']'.repeat(10_000)}}}`;
    const r = await api('POST', '/workflows/quickstart/runs', body);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({
      code: 'input_too_deep',
      message: "the request body is nested more than 33 levels deep: a run's input may nest at most 32 levels",
    });
    const justOver = await api('POST', '/workflows/quickstart/runs', {
      input: { topic: 'tides', x: JSON.parse(`${'['.repeat(32)}1${']'.repeat(32)}`) },
    });
    expect([justOver.status, justOver.json.error?.code]).toEqual([400, 'input_too_deep']);
    expect((await api('GET', '/workflows/quickstart/runs')).json.runs.length).toBe(before);
  });

  it('names a port that is taken (port_in_use), with what to do', async () => {
    const port = Number(new URL(handle.url).port);
    const err = await startServe(bufferIo(project.dir), new EmbeddedRunService(stack, project.dir), port).then(
      () => undefined,
      (e: unknown) => e as { code?: string; message?: string; hint?: string },
    );
    expect(err).toMatchObject({
      name: 'StepforgeError',
      code: 'port_in_use',
      message: `port ${port} on 127.0.0.1 is in use by another program`,
      hint: 'pick another with --port N, or --port 0 for any free one',
    });
  });

  it('refuses what web pages of other sites send through the browser: another Host (DNS rebinding) or Origin', async () => {
    const { port } = new URL(handle.url);
    /** A raw request, so that the Host and Origin headers are exactly these. */
    const raw = (path: string, headers: Record<string, string>, body?: string) =>
      new Promise<{ status: number; json: any }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path, method: body === undefined ? 'GET' : 'POST', headers }, (res) => {
          let text = '';
          res
            .setEncoding('utf8')
            .on('data', (c: string) => (text += c))
            .on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
        });
        req.on('error', reject).end(body);
      });
    const before = (await api('GET', '/workflows/quickstart/runs')).json.runs.length;
    const rebound = await raw('/approvals', { host: `rebind.attacker.example:${port}` });
    expect([rebound.status, rebound.json.error.code]).toEqual([403, 'host_not_allowed']);
    expect(rebound.json.error.message).toBe(
      `the Host header 'rebind.attacker.example:${port}' is not a loopback name: this server answers requests to 127.0.0.1, localhost or [::1] only (another name can be a web page reaching it through DNS rebinding)`,
    );
    // A "simple" cross-site POST (text/plain, no preflight) starts nothing.
    const crossSite = await raw(
      '/workflows/quickstart/runs',
      { host: `127.0.0.1:${port}`, origin: 'https://attacker.example', 'content-type': 'text/plain' },
      '{"input":{"topic":"x"}}',
    );
    expect([crossSite.status, crossSite.json.error.code]).toEqual([403, 'origin_not_allowed']);
    const sandboxed = await raw('/approvals', { host: `localhost:${port}`, origin: 'null' });
    expect([sandboxed.status, sandboxed.json.error.code]).toEqual([403, 'origin_not_allowed']);
    // The Step Functions API on this port is behind the same check.
    const sfn = await raw(
      '/',
      {
        host: `rebind.attacker.example:${port}`,
        'x-amz-target': 'AWSStepFunctions.ListStateMachines',
        'content-type': 'application/x-amz-json-1.0',
      },
      '{}',
    );
    expect([sfn.status, sfn.json.error.code]).toEqual([403, 'host_not_allowed']);
    expect((await api('GET', '/workflows/quickstart/runs')).json.runs.length).toBe(before);
    // Pages served from loopback, and the user's own tools under any loopback name, are answered
    // when they carry the token; without it they are not.
    expect((await raw('/approvals', { host: `localhost:${port}`, origin: 'http://localhost:5173', ...auth() })).status).toBe(200);
    expect((await raw('/approvals', { host: `[::1]:${port}`, ...auth() })).status).toBe(200);
    const tokenless = await raw('/approvals', { host: `127.0.0.1:${port}` });
    expect([tokenless.status, tokenless.json.error.code]).toEqual([401, 'unauthorized']);
  });

  it('lists the workflows under examples/', async () => {
    const r = await api('GET', '/workflows');
    expect(r.status).toBe(200);
    const names = r.json.workflows.map((w: { name: string }) => w.name);
    expect(names).toEqual(expect.arrayContaining(['quickstart', 'customer-support', 'file-review', 'approval-gate', 'research-swarm']));
    expect(r.json.workflows.find((w: { name: string }) => w.name === 'quickstart')).toMatchObject({
      format: 'chain',
      steps: ['plan', 'draft', 'critique', 'judge'],
    });
  });

  it('starts a run, honours Idempotency-Key, and shows runs', async () => {
    const first = await api(
      'POST',
      '/workflows/quickstart/runs',
      { input: { topic: 'tides' }, wait: true },
      { 'Idempotency-Key': 'http-1' },
    );
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ status: 'SUCCEEDED', reused: false });
    expect(first.json.output).toMatch(/^\[offline:echo\] Revise the draft/);
    const again = await api('POST', '/workflows/quickstart/runs', { input: { topic: 'tides' } }, { 'Idempotency-Key': 'http-1' });
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ runId: first.json.runId, status: 'SUCCEEDED', reused: true });
    // Another input under the key: the run as it ran, and the answer says the input differed.
    const otherInput = await api(
      'POST',
      '/workflows/quickstart/runs',
      { input: { topic: 'reefs' }, wait: true },
      { 'Idempotency-Key': 'http-1' },
    );
    expect([otherInput.status, otherInput.json]).toEqual([
      200,
      { runId: first.json.runId, status: 'SUCCEEDED', output: first.json.output, reused: true, inputDiffers: true },
    ]);
    const elsewhere = await api('POST', '/workflows/research-swarm/runs', { input: { task: 'tides' } }, { 'Idempotency-Key': 'http-1' });
    expect([elsewhere.status, elsewhere.json.error.code]).toEqual([409, 'idempotency_key_conflict']);
    const long = await api('POST', '/workflows/quickstart/runs', { input: { topic: 'tides' } }, { 'Idempotency-Key': 'k'.repeat(300) });
    expect([long.status, long.json.error]).toEqual([
      400,
      { code: 'invalid_request', message: 'Idempotency-Key header: an idempotency key is at most 256 characters, got 300' },
    ]);

    const shown = await api('GET', `/runs/${first.json.runId}`);
    expect(shown.status).toBe(200);
    expect(shown.json.run).toMatchObject({ runId: first.json.runId, status: 'SUCCEEDED', idempotencyKey: 'http-1' });
    expect(shown.json.steps.map((s: { id: string }) => s.id)).toEqual(['plan', 'draft', 'critique', 'judge']);
    const list = await api('GET', '/workflows/quickstart/runs');
    expect(list.json.runs.map((x: { runId: string }) => x.runId)).toContain(first.json.runId);
    expect((await api('GET', '/workflows/quickstart/runs?status=succeeded')).json.runs.map((x: { runId: string }) => x.runId)).toContain(
      first.json.runId,
    );
    const badStatus = await api('GET', '/workflows/quickstart/runs?status=done');
    expect([badStatus.status, badStatus.json.error]).toEqual([
      400,
      { code: 'invalid_request', message: "status must be one of RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED, got 'done'" },
    ]);
    const unknown = await api('GET', '/workflows/nope/runs');
    expect([unknown.status, unknown.json.error]).toEqual([404, { code: 'unknown_workflow', message: "no workflow named 'nope'" }]);
    const badApprovals = await api('GET', '/approvals?status=waiting');
    expect([badApprovals.status, badApprovals.json.error.code]).toEqual([400, 'invalid_request']);
  });

  it('forks runs: retry and restart', async () => {
    const base = await api('POST', '/workflows/research-swarm/runs', { input: { task: 'tides' }, wait: true });
    expect(base.json.status).toBe('SUCCEEDED');
    const retry = await api('POST', `/runs/${base.json.runId}/retry`, { wait: true });
    expect(retry.json).toMatchObject({ parentRunId: base.json.runId, status: 'SUCCEEDED', output: base.json.output });
    const restart = await api('POST', `/runs/${base.json.runId}/restart`, { from: 'agent_2', wait: true });
    expect(restart.json).toMatchObject({ parentRunId: base.json.runId, status: 'SUCCEEDED', rerun: ['agent_2', 'gather'] });
    const started = await api('POST', `/runs/${base.json.runId}/restart`, { from: 'gather' });
    expect(started.status).toBe(202);
    expect(started.json).toMatchObject({ parentRunId: base.json.runId, status: 'RUNNING', rerun: ['gather'] });
  });

  it('cancels a run', async () => {
    // A run that waits for a human cannot finish before the cancel arrives, however fast the steps are.
    const started = await api('POST', '/workflows/approval-gate/runs', { input: { version: '9.0.0' } });
    expect(started.status).toBe(202);
    expect((await api('POST', `/runs/${started.json.runId}/cancel`, { reason: 42 })).json.error.code).toBe('invalid_request');
    const cancelled = await api('POST', `/runs/${started.json.runId}/cancel`, { reason: 'changed my mind' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json).toEqual({ runId: started.json.runId, status: 'ABORTED' });
    const details = await api('GET', `/runs/${started.json.runId}`);
    expect(JSON.stringify(details.json)).toContain('changed my mind');
  });

  it('shows the step a cancel stopped mid-wait as failed from its start to the stop, with the reason as its error', async () => {
    const started = await api('POST', '/workflows/approval-gate/runs', { input: { version: '9.1.0' } });
    expect(started.status).toBe(202);
    let waiting = false;
    for (let i = 0; i < 400 && !waiting; i++) {
      waiting = (await api('GET', '/approvals')).json.approvals.some((a: { runId: string }) => a.runId === started.json.runId);
      if (!waiting) await new Promise((r) => setTimeout(r, 25));
    }
    expect(waiting).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect((await api('POST', `/runs/${started.json.runId}/cancel`, { reason: 'not this release' })).json).toEqual({
      runId: started.json.runId,
      status: 'ABORTED',
    });
    const { run, steps } = (await api('GET', `/runs/${started.json.runId}`)).json as {
      run: { endedAt: string; error: unknown };
      steps: { id: string; status: string; startedAt: string | null; endedAt: string | null; durationMs: number | null; error: unknown }[];
    };
    expect(run.error).toEqual({ name: 'Cancelled', message: 'not this release' });
    expect(steps.map((s) => [s.id, s.status, s.error])).toEqual([
      ['notes', 'succeeded', null],
      ['publish', 'failed', { error: 'Cancelled', cause: 'not this release' }],
      ['receipt', 'skipped', null],
    ]);
    const publish = steps[1]!;
    expect(publish.durationMs).toBeGreaterThanOrEqual(300);
    expect(Date.parse(publish.endedAt!) - Date.parse(publish.startedAt!)).toBe(publish.durationMs);
    expect(Date.parse(publish.endedAt!)).toBeLessThanOrEqual(Date.parse(run.endedAt));
  });

  it('answers 405 with an Allow header, HEAD as GET without a body, and refuses two idempotency keys that disagree', async () => {
    for (const [method, path, allow] of [
      ['DELETE', '/workflows', 'GET, HEAD'],
      ['PUT', '/workflows/quickstart/runs', 'GET, HEAD, POST'],
      ['GET', '/runs/x/cancel', 'POST'],
    ] as const) {
      const r = await fetch(`${handle.url}${path}`, { method, headers: auth() });
      expect([method, path, r.status, r.headers.get('allow'), ((await r.json()) as { error: { code: string } }).error.code]).toEqual([
        method,
        path,
        405,
        allow,
        'method_not_allowed',
      ]);
    }
    const get = await fetch(`${handle.url}/workflows`, { headers: auth() });
    const head = await fetch(`${handle.url}/workflows`, { method: 'HEAD', headers: auth() });
    expect([head.status, head.headers.get('content-type'), head.headers.get('content-length'), await head.text()]).toEqual([
      200,
      'application/json',
      String(Buffer.byteLength(await get.text())),
      '',
    ]);
    const before = (await api('GET', '/workflows/quickstart/runs')).json.runs.length;
    const both = await api(
      'POST',
      '/workflows/quickstart/runs',
      { input: { topic: 'tides' }, idempotencyKey: 'body-key' },
      { 'Idempotency-Key': 'header-key' },
    );
    expect([both.status, both.json.error]).toEqual([
      400,
      {
        code: 'invalid_request',
        message:
          "the Idempotency-Key header ('header-key') and the body's idempotencyKey ('body-key') disagree: send the key once, in either place",
      },
    ]);
    expect((await api('GET', '/workflows/quickstart/runs')).json.runs.length).toBe(before);
    const same = await api(
      'POST',
      '/workflows/quickstart/runs',
      { input: { topic: 'tides' }, idempotencyKey: 'same-key', wait: true },
      { 'Idempotency-Key': 'same-key' },
    );
    expect(same.json).toMatchObject({ status: 'SUCCEEDED', reused: false });
    expect((await api('GET', `/runs/${same.json.runId}`)).json.run.idempotencyKey).toBe('same-key');
  });

  it('validates request bodies and answers errors as {"error":{"code","message"}}', async () => {
    const cases: [string, string, unknown, number, string][] = [
      ['POST', '/workflows/quickstart/runs', { input: { topic: 1 } }, 400, 'invalid_input'],
      ['POST', '/workflows/quickstart/runs', { inputs: {} }, 400, 'invalid_request'],
      ['POST', '/workflows/quickstart/runs', '{not json', 400, 'invalid_json'],
      ['POST', '/workflows/nope/runs', {}, 404, 'unknown_workflow'],
      ['GET', '/runs/nope', undefined, 404, 'unknown_run'],
      ['POST', '/runs/nope/restart', { from: 'x' }, 404, 'unknown_run'],
      ['POST', '/runs/nope/restart', {}, 400, 'invalid_request'],
      ['POST', '/approvals/nope', { decision: 'approve' }, 404, 'unknown_approval'],
      ['POST', '/approvals/nope', { decision: 'maybe' }, 400, 'invalid_request'],
      ['GET', '/nowhere', undefined, 404, 'not_found'],
      ['DELETE', '/workflows', undefined, 405, 'method_not_allowed'],
      ['GET', '/runs/%E0%A4%A', undefined, 400, 'invalid_request'],
    ];
    for (const [method, path, body, status, code] of cases) {
      const r = await api(method, path, body);
      expect([method, path, r.status, r.json.error?.code]).toEqual([method, path, status, code]);
      expect(typeof r.json.error.message).toBe('string');
    }
    // An input Step Functions would refuse is refused before a run is recorded.
    const before = (await api('GET', '/workflows/quickstart/runs')).json.runs.length;
    const big = await api('POST', '/workflows/quickstart/runs', { input: { topic: 'x'.repeat(300 * 1024) } });
    expect([big.status, big.json.error.code]).toEqual([413, 'input_too_large']);
    expect(big.json.error.message).toMatch(
      /^the run's input is 300\.0 KiB \(\d+ bytes\) as Step Functions execution input; Step Functions takes at most 256 KiB \(262144 bytes\)$/,
    );
    expect((await api('GET', '/workflows/quickstart/runs')).json.runs.length).toBe(before);
    // A body over API Gateway's 10 MB is not read to its end, and the server goes on serving.
    const huge = await api('POST', '/workflows/quickstart/runs', { input: { topic: 'x'.repeat(11 * 1024 * 1024) } }).catch((e: Error) => ({
      status: 0,
      json: { error: { code: e.message } },
    }));
    expect([huge.status, huge.json.error.code]).toEqual([413, 'request_too_large']);
    expect(huge.json.error.message).toBe('the request body is over 10 MiB, the most API Gateway accepts');
    expect((await api('GET', '/workflows/quickstart/runs')).json.runs.length).toBe(before);
    const approvals = await api('GET', '/approvals');
    expect(approvals).toEqual({ status: 200, json: { approvals: [] } });
  });

  it('lists a pending approval and decides it, which carries the run on (GET /approvals, POST /approvals/{id})', async () => {
    const started = await api('POST', '/workflows/approval-gate/runs', { input: { version: '8.0.0' } });
    expect(started.status).toBe(202);
    let pending: { approvalId: string; runId: string; tool: string; args: unknown; status: string } | undefined;
    for (let i = 0; i < 400 && !pending; i++) {
      pending = (await api('GET', '/approvals')).json.approvals.find((a: { runId: string }) => a.runId === started.json.runId);
      if (!pending) await new Promise((r) => setTimeout(r, 25));
    }
    expect(pending).toMatchObject({ tool: 'shell', args: { command: 'echo announcing release 8.0.0' }, status: 'PENDING' });
    expect(pending).not.toHaveProperty('taskToken');
    const decided = await api('POST', `/approvals/${pending!.approvalId}`, { decision: 'approve', comment: 'over http' });
    expect(decided.status).toBe(200);
    expect(decided.json).toMatchObject({ approvalId: pending!.approvalId, status: 'APPROVED', decidedBy: 'api', reason: 'over http' });
    expect(decided.json).not.toHaveProperty('taskToken');
    let run: { status: string; output?: unknown } = { status: 'RUNNING' };
    for (let i = 0; i < 400 && run.status === 'RUNNING'; i++) {
      run = (await api('GET', `/runs/${started.json.runId}`)).json.run;
      if (run.status === 'RUNNING') await new Promise((r) => setTimeout(r, 25));
    }
    expect(run).toMatchObject({
      status: 'SUCCEEDED',
      output: { version: '8.0.0', announced: { exitCode: 0, stdout: 'announcing release 8.0.0\n' } },
    });
    const again = await api('POST', `/approvals/${pending!.approvalId}`, { decision: 'reject' });
    expect([again.status, again.json.error.code]).toEqual([409, 'approval_decided']);
    expect((await api('GET', '/approvals')).json.approvals).toEqual([]);
  });

  // After a change to the API: npx tsx packages/contract/scripts/writeOpenApi.ts rewrites docs/openapi.json.
  it('serves its OpenAPI document, identical to docs/openapi.json', async () => {
    const r = await api('GET', '/openapi.json');
    expect(r.json).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
    expect(JSON.parse(readFileSync(join(REPO, 'docs', 'openapi.json'), 'utf8'))).toEqual(r.json);
    expect(Object.keys(r.json.paths).sort()).toEqual([
      '/approvals',
      '/approvals/{id}',
      '/openapi.json',
      '/runs/{id}',
      '/runs/{id}/cancel',
      '/runs/{id}/restart',
      '/runs/{id}/retry',
      '/workflows',
      '/workflows/{name}/runs',
    ]);
  });

  it('passes Step Functions API requests through to the engine', async () => {
    // Signed by the stack's credentials (stack.json's), as the engine's own port requires.
    const sfn = new SFNClient({ endpoint: handle.url, region: 'us-east-1', credentials: stack.endpoints.credentials });
    const machines = await sfn.send(new ListStateMachinesCommand({}));
    expect(machines.stateMachines?.map((m) => m.name)).toContain('quickstart');
    sfn.destroy();
  });
});
