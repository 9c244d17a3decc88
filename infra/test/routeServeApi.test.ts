import { describe, expect, it } from 'vitest';
import type { Runtime } from '@stepforge/functions';
import { routeServeApi, type RestProxyEvent } from '../lib/lambda/api.js';

/** A Runtime double: just the parts the routes reach, recording what they were asked. */
function runtime(overrides: { runs?: Record<string, any>; describe?: Record<string, unknown> | ((arn: string) => Record<string, unknown>); approvals?: Record<string, any>[] } = {}) {
  const calls: { sfn: { name: string; input: any }[]; finished: [string, unknown][]; started: unknown[]; decided: unknown[] } = { sfn: [], finished: [], started: [], decided: [] };
  const runs: Record<string, any> = overrides.runs ?? {};
  const rt = {
    config: { stateMachines: { 'research-brief': 'arn:aws:states:us-east-1:1:stateMachine:research-brief', 'order-triage': 'arn:aws:states:us-east-1:1:stateMachine:order-triage' } },
    logger: { error: () => undefined, info: () => undefined },
    redactor: { redactText: (s: string) => s, redact: (v: unknown) => v },
    sfn: () => ({
      send: async (cmd: { constructor: { name: string }; input: any }) => {
        calls.sfn.push({ name: cmd.constructor.name, input: cmd.input });
        if (cmd.constructor.name === 'StartExecutionCommand') return { executionArn: `arn:exec:${cmd.input.name}` };
        if (cmd.constructor.name === 'DescribeExecutionCommand') {
          const d = overrides.describe;
          return (typeof d === 'function' ? d(cmd.input.executionArn) : d) ?? { status: 'RUNNING' };
        }
        return {};
      },
    }),
    runs: {
      startRun: async (p: any) => {
        calls.started.push(p);
        return { run: { runId: 'run-1', workflow: p.workflow, status: 'RUNNING' }, reused: false };
      },
      finishRun: async (id: string, p: unknown) => void calls.finished.push([id, p]),
      getRun: async (id: string) => runs[id],
      listSteps: async () => [],
      listEvents: async () => [],
      listRuns: async (p: unknown) => [{ runId: 'run-1', query: p }],
    },
    approvals: {
      list: async (status: string) => overrides.approvals?.filter((a) => a['status'] === status) ?? [{ approvalId: 'ap-1', status, taskToken: 'secret-token' }],
      get: async (id: string) => overrides.approvals?.find((a) => a['approvalId'] === id),
    },
  };
  return { rt: rt as unknown as Runtime, calls };
}

const req = (httpMethod: string, path: string, body?: unknown, headers: Record<string, string> = {}): RestProxyEvent => ({
  httpMethod,
  path,
  headers,
  body: body === undefined ? null : JSON.stringify(body),
});

const parse = (r: { statusCode: number; body: string }) => ({ status: r.statusCode, body: JSON.parse(r.body) });

describe('Function: routeServeApi', () => {
  it('lists the deployed workflows', async () => {
    const { rt } = runtime();
    expect(parse(await routeServeApi(rt, req('GET', '/workflows')))).toEqual({
      status: 200,
      body: {
        workflows: [
          { name: 'order-triage', stateMachineArn: 'arn:aws:states:us-east-1:1:stateMachine:order-triage' },
          { name: 'research-brief', stateMachineArn: 'arn:aws:states:us-east-1:1:stateMachine:research-brief' },
        ],
      },
    });
  });

  it('starts a run of the named workflow with the Idempotency-Key header, through the runtime', async () => {
    const { rt, calls } = runtime();
    const res = parse(await routeServeApi(rt, req('POST', '/workflows/research-brief/runs', { input: { topic: 'tides' } }, { 'Idempotency-Key': 'k-1' })));
    expect(res).toEqual({ status: 202, body: { runId: 'run-1', executionArn: 'arn:exec:run-1', status: 'RUNNING', reused: false } });
    expect(calls.started).toEqual([{ workflow: 'research-brief', idempotencyKey: 'k-1', parentRunId: undefined, input: { topic: 'tides' } }]);
    const start = calls.sfn.find((c) => c.name === 'StartExecutionCommand')!;
    expect(start.input.stateMachineArn).toBe('arn:aws:states:us-east-1:1:stateMachine:research-brief');
  });

  it('answers 404 unknown_workflow for a workflow that is not deployed', async () => {
    const { rt } = runtime();
    expect(parse(await routeServeApi(rt, req('POST', '/workflows/nope/runs', {})))).toEqual({
      status: 404,
      body: { error: { code: 'unknown_workflow', message: "no workflow named 'nope'" } },
    });
  });

  it('refreshes a RUNNING run from Step Functions and records the final status', async () => {
    const { rt, calls } = runtime({
      runs: { 'run-1': { runId: 'run-1', status: 'RUNNING', executionArn: 'arn:exec:run-1' } },
      describe: { status: 'SUCCEEDED', output: '{"text":"done"}' },
    });
    (rt.runs as any).getRun = async () => ({ runId: 'run-1', status: 'RUNNING', executionArn: 'arn:exec:run-1' });
    const res = parse(await routeServeApi(rt, req('GET', '/runs/run-1')));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ runId: 'run-1', status: 'SUCCEEDED', executionArn: 'arn:exec:run-1', output: { text: 'done' }, steps: [], events: [] });
    expect(calls.finished).toEqual([['run-1', { status: 'SUCCEEDED', output: { text: 'done' } }]]);
  });

  it('cancels with StopExecution and retries with RedriveExecution; restart is not offered on AWS', async () => {
    const { rt, calls } = runtime({ runs: { r: { runId: 'r', status: 'FAILED', executionArn: 'arn:exec:r' } } });
    expect(parse(await routeServeApi(rt, req('POST', '/runs/r/cancel', {}))).body).toEqual({ runId: 'r', status: 'ABORTED' });
    expect(parse(await routeServeApi(rt, req('POST', '/runs/r/retry', {})))).toEqual({ status: 202, body: { runId: 'r', status: 'RUNNING', redriven: true } });
    expect(calls.sfn.map((c) => [c.name, c.input.executionArn])).toEqual([
      ['StopExecutionCommand', 'arn:exec:r'],
      ['RedriveExecutionCommand', 'arn:exec:r'],
    ]);
    const restart = parse(await routeServeApi(rt, req('POST', '/runs/r/restart', { from: 'draft' })));
    expect(restart.status).toBe(501);
    expect(restart.body.error.code).toBe('not_implemented');
    expect(parse(await routeServeApi(rt, req('POST', '/runs/missing/cancel', {}))).body.error.code).toBe('unknown_run');
  });

  it('lists approvals without task tokens and validates decisions', async () => {
    const { rt } = runtime();
    expect(parse(await routeServeApi(rt, req('GET', '/approvals')))).toEqual({ status: 200, body: { approvals: [{ approvalId: 'ap-1', status: 'PENDING' }] } });
    // The same schema and message as `stepforge serve` (API_BODIES, parseApiBody).
    const refused = parse(await routeServeApi(rt, req('POST', '/approvals/ap-1', { decision: 'maybe' })));
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('invalid_request');
    expect(refused.body.error.message).toMatch(/^invalid request body: decision: /);
    // A misspelt field is refused, not ignored.
    const typo = parse(await routeServeApi(rt, req('POST', '/approvals/ap-1', { decision: 'approve', coment: 'ok' })));
    expect(typo).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    expect(typo.body.error.message).toContain('coment');
  });

  it('leaves out pending approvals of runs that have ended, and refuses to decide one (409 run_ended), as serve does', async () => {
    const pending = (approvalId: string, runId: string) => ({ approvalId, runId, status: 'PENDING', taskToken: `token-${approvalId}` });
    const { rt, calls } = runtime({
      runs: {
        'r-open': { runId: 'r-open', status: 'RUNNING', executionArn: 'arn:exec:r-open' },
        'r-stopped': { runId: 'r-stopped', status: 'RUNNING', executionArn: 'arn:exec:r-stopped' },
        'r-failed': { runId: 'r-failed', status: 'FAILED' },
      },
      describe: (arn) => (arn === 'arn:exec:r-stopped' ? { status: 'ABORTED', error: 'Cancelled', cause: 'no' } : { status: 'RUNNING' }),
      approvals: [pending('ap-open', 'r-open'), pending('ap-open-2', 'r-open'), pending('ap-stopped', 'r-stopped'), pending('ap-failed', 'r-failed'), { approvalId: 'ap-done', runId: 'r-failed', status: 'APPROVED' }],
    });
    const listed = parse(await routeServeApi(rt, req('GET', '/approvals')));
    expect(listed).toEqual({ status: 200, body: { approvals: [{ approvalId: 'ap-open', runId: 'r-open', status: 'PENDING' }, { approvalId: 'ap-open-2', runId: 'r-open', status: 'PENDING' }] } });
    // One DescribeExecution per running run, and the stopped one's record settles.
    expect(calls.sfn.map((c) => c.input.executionArn).sort()).toEqual(['arn:exec:r-open', 'arn:exec:r-stopped']);
    expect(calls.finished).toEqual([['r-stopped', { status: 'ABORTED', error: { name: 'Cancelled', message: 'no' } }]]);
    // Other statuses are listed as stored.
    expect(parse(await routeServeApi(rt, { ...req('GET', '/approvals'), queryStringParameters: { status: 'APPROVED' } }))).toEqual({
      status: 200, body: { approvals: [{ approvalId: 'ap-done', runId: 'r-failed', status: 'APPROVED' }] },
    });
    const refused = parse(await routeServeApi(rt, req('POST', '/approvals/ap-failed', { decision: 'approve' })));
    expect(refused).toEqual({ status: 409, body: { error: { code: 'run_ended', message: "run 'r-failed' has ended (FAILED), so nothing waits for approval 'ap-failed'; the call was not made" } } });
  });

  it('validates start, retry and cancel bodies as serve does, and answers wait: true with 501', async () => {
    const { rt } = runtime();
    const bad = parse(await routeServeApi(rt, req('POST', '/workflows/research-brief/runs', { input: 'not an object' })));
    expect(bad).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    expect(bad.body.error.message).toMatch(/^invalid request body: input: /);
    expect(parse(await routeServeApi(rt, req('POST', '/workflows/research-brief/runs', { input: {}, wait: true })))).toMatchObject({ status: 501, body: { error: { code: 'not_implemented' } } });
    expect(parse(await routeServeApi(rt, req('POST', '/runs/r-1/retry', { wiat: true })))).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    expect(parse(await routeServeApi(rt, req('POST', '/runs/r-1/cancel', { reason: 42 })))).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
  });

  it('answers 400 for a body that is not JSON, 404 for unknown paths and 405 for other methods, as serve does', async () => {
    const { rt } = runtime();
    expect(parse(await routeServeApi(rt, { httpMethod: 'POST', path: '/workflows/research-brief/runs', body: '[1' })).body.error.code).toBe('invalid_json');
    // A base64 body (API Gateway's binary passthrough) is decoded before it is validated.
    const encoded = Buffer.from(JSON.stringify({ input: 'nope' })).toString('base64');
    expect(parse(await routeServeApi(rt, { httpMethod: 'POST', path: '/workflows/research-brief/runs', body: encoded, isBase64Encoded: true })).body.error.message).toMatch(/^invalid request body: input: /);
    expect(parse(await routeServeApi(rt, req('DELETE', '/workflows')))).toEqual({ status: 405, body: { error: { code: 'method_not_allowed', message: 'DELETE is not allowed on /workflows' } } });
    expect(parse(await routeServeApi(rt, req('GET', '/nowhere')))).toEqual({ status: 404, body: { error: { code: 'not_found', message: 'no route for GET /nowhere' } } });
    // The OpenAPI document is served by `stepforge serve` only (docs/openapi.json on AWS).
    expect(parse(await routeServeApi(rt, req('GET', '/openapi.json'))).status).toBe(404);
    expect(parse(await routeServeApi(rt, req('GET', '/runs/%E0%A4%A')))).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
  });
});
