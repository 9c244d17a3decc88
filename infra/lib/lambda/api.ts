// API Gateway entry point for the deployed stack: serves the routes of `stepforge serve` (issue 7,
// docs/openapi.json) on top of the runtime's api handler (`routeApi` in @stepforge/functions), whose
// own routes are `/runs` and `/approvals/{id}/approve|reject`. It adds what only AWS can answer: the
// workflow list from the deployed state machines, live execution status (DescribeExecution), cancel
// (StopExecution) and retry (RedriveExecution: re-runs only what did not finish).
import { DescribeExecutionCommand, RedriveExecutionCommand, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { API_BODIES, defaultRuntime, parseApiBody, routeApi, type ApiBodySchema, type ApiEvent, type ApiResponse, type Runtime } from '@stepforge/functions';

/** The REST API (v1) proxy event fields the adapter reads. */
export interface RestProxyEvent extends ApiEvent {
  readonly pathParameters?: Record<string, string | undefined> | null;
}

const FINAL = new Set(['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']);

const json = (statusCode: number, body: unknown): ApiResponse => ({ statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const fail = (statusCode: number, code: string, message: string): ApiResponse => json(statusCode, { error: { code, message } });

/** The runtime answers `{error: {name, message}}`; the serve API answers `{error: {code, message}}`. */
function normalise(res: ApiResponse): ApiResponse {
  if (res.statusCode < 400) return res;
  try {
    const body = JSON.parse(res.body) as { error?: { name?: string; code?: string; message?: string } };
    if (body.error && !body.error.code) return json(res.statusCode, { error: { code: body.error.name, message: body.error.message } });
  } catch {
    // not JSON: pass through
  }
  return res;
}

/**
 * The request body, validated with the schemas `stepforge serve` uses (API_BODIES), so both answer
 * a body they refuse with the same 400 `invalid_json` / `invalid_request` and message.
 */
function parseBody<T>(event: ApiEvent, schema: ApiBodySchema<T>): { value: T } | { response: ApiResponse } {
  const text = event.body && event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  const r = parseApiBody(schema, text);
  return r.ok ? { value: r.value } : { response: fail(400, r.error.code, r.error.message) };
}

/** `wait: true` holds the request until the run ends: only `stepforge serve` can (API Gateway's 29 s limit). */
const noWait = () => fail(501, 'not_implemented', 'wait: true is served by `stepforge serve`; on AWS, poll GET /runs/{id} until the status is final');

/** The run's Step Functions execution, or the answer when there is none (404 unknown_run, 409 no_execution). */
async function executionArnOf(rt: Runtime, id: string): Promise<string | ApiResponse> {
  const run = await rt.runs.getRun(id);
  if (!run) return fail(404, 'unknown_run', `no run with id ${id}`);
  if (!run.executionArn) return fail(409, 'no_execution', `run ${id} has no Step Functions execution`);
  return run.executionArn;
}

/** Sub-request to the runtime's router. */
const call = (rt: Runtime, method: string, path: string, body?: unknown, query: Record<string, string | undefined> = {}) =>
  routeApi(rt, { httpMethod: method, path, queryStringParameters: query, body: body === undefined ? null : JSON.stringify(body) });

/** The run record, with a RUNNING status refreshed from Step Functions (and persisted once final). */
async function runDetails(rt: Runtime, id: string): Promise<ApiResponse> {
  const res = await call(rt, 'GET', `/runs/${encodeURIComponent(id)}`);
  if (res.statusCode !== 200) return normalise(res);
  const { run, steps, events } = JSON.parse(res.body) as { run: Record<string, any>; steps: unknown; events: unknown };
  if (run['status'] === 'RUNNING' && typeof run['executionArn'] === 'string') {
    // Express executions cannot be described; their status stays what the handlers recorded.
    const d = await rt.sfn().send(new DescribeExecutionCommand({ executionArn: run['executionArn'] })).catch(() => undefined);
    if (d?.status && FINAL.has(d.status)) {
      const output = d.output !== undefined ? (JSON.parse(d.output) as unknown) : undefined;
      const error = d.status === 'SUCCEEDED' ? undefined : { name: d.error ?? d.status, message: d.cause ?? '' };
      await rt.runs.finishRun(String(run['runId']), { status: d.status as 'SUCCEEDED', ...(output !== undefined ? { output } : {}), ...(error ? { error } : {}) });
      Object.assign(run, { status: d.status, ...(output !== undefined ? { output } : {}), ...(error ? { error } : {}) });
    }
  }
  return json(200, { ...run, steps, events });
}

/** Routes one API Gateway request. */
export async function routeServeApi(rt: Runtime, event: RestProxyEvent): Promise<ApiResponse> {
  const method = (event.httpMethod ?? 'GET').toUpperCase();
  const path = (event.path ?? '/').replace(/\/+$/, '') || '/';
  const q = event.queryStringParameters ?? {};
  const header = (n: string) => Object.entries(event.headers ?? {}).find(([k]) => k.toLowerCase() === n)?.[1];
  const machines = rt.config.stateMachines;
  let m: RegExpExecArray | null;
  try {
    if (method === 'GET' && path === '/workflows') {
      return json(200, { workflows: Object.keys(machines).sort().map((name) => ({ name, stateMachineArn: machines[name] })) });
    }
    if ((m = /^\/workflows\/([^/]+)\/runs$/.exec(path))) {
      const name = decodeURIComponent(m[1]!);
      if (method === 'POST') {
        const body = parseBody(event, API_BODIES.StartRunBody);
        if ('response' in body) return body.response;
        if (!machines[name]) return fail(404, 'unknown_workflow', `no workflow named '${name}'`);
        if (body.value.wait) return noWait();
        const key = header('idempotency-key') ?? body.value.idempotencyKey;
        return normalise(await call(rt, 'POST', '/runs', { workflow: name, input: body.value.input ?? {}, ...(key ? { idempotencyKey: key } : {}) }));
      }
      if (!machines[name]) return fail(404, 'unknown_workflow', `no workflow named '${name}'`);
      return normalise(await call(rt, 'GET', '/runs', undefined, { workflow: name, status: q['status'] }));
    }
    if (method === 'GET' && (m = /^\/runs\/([^/]+)$/.exec(path))) return await runDetails(rt, decodeURIComponent(m[1]!));
    if (method === 'POST' && (m = /^\/runs\/([^/]+)\/(retry|restart|cancel)$/.exec(path))) {
      const id = decodeURIComponent(m[1]!);
      if (m[2] === 'restart') {
        return fail(501, 'not_implemented', 'restart --from STEP forks runs in the embedded stack (`stepforge runs restart`); on AWS use retry (Step Functions redrive)');
      }
      if (m[2] === 'cancel') {
        const body = parseBody(event, API_BODIES.CancelBody);
        if ('response' in body) return body.response;
        const executionArn = await executionArnOf(rt, id);
        if (typeof executionArn !== 'string') return executionArn;
        await rt.sfn().send(new StopExecutionCommand({ executionArn, error: 'Cancelled', cause: body.value.reason ?? 'cancelled through the API' }));
        await rt.runs.finishRun(id, { status: 'ABORTED' });
        return json(200, { runId: id, status: 'ABORTED' });
      }
      const body = parseBody(event, API_BODIES.RetryBody);
      if ('response' in body) return body.response;
      const executionArn = await executionArnOf(rt, id);
      if (typeof executionArn !== 'string') return executionArn;
      if (body.value.wait) return noWait();
      // Redrive re-runs the failed state and what follows it; finished steps are not repeated.
      await rt.sfn().send(new RedriveExecutionCommand({ executionArn }));
      await rt.runs.finishRun(id, { status: 'RUNNING' });
      return json(202, { runId: id, status: 'RUNNING', redriven: true });
    }
    if (method === 'GET' && path === '/approvals') return normalise(await call(rt, 'GET', '/approvals', undefined, { status: q['status'] }));
    if (method === 'POST' && (m = /^\/approvals\/([^/]+)$/.exec(path))) {
      const body = parseBody(event, API_BODIES.DecisionBody);
      if ('response' in body) return body.response;
      const { decision, comment } = body.value;
      return normalise(await call(rt, 'POST', `/approvals/${m[1]}/${decision}`, { by: 'api', ...(comment ? { reason: comment } : {}) }));
    }
    return fail(404, 'not_found', `no route ${method} ${path}`);
  } catch (e) {
    const err = e as Error;
    rt.logger.error('api request failed', { errorName: err.name, errorMessage: err.message });
    const status = err.name === 'ExecutionDoesNotExist' ? 404 : err.name === 'ExecutionNotRedrivable' ? 409 : 500;
    return fail(status, err.name, rt.redactor.redactText(err.message));
  }
}

/** Lambda entry point (API Gateway REST proxy integration). */
export const handler = async (event: RestProxyEvent): Promise<ApiResponse> => routeServeApi(defaultRuntime(), event);
