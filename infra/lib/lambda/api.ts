// API Gateway entry point for the deployed stack: serves the routes of `stepforge serve` (issue 7,
// docs/openapi.json) on top of the runtime's api handler (`routeApi` in @stepforge/functions), whose
// own routes are `/runs` and `/approvals/{id}/approve|reject`. It adds what only AWS can answer: the
// workflow list from the deployed state machines, live execution status (DescribeExecution), cancel
// (StopExecution) and retry (RedriveExecution: re-runs only what did not finish).
import { DescribeExecutionCommand, RedriveExecutionCommand, StopExecutionCommand } from '@aws-sdk/client-sfn';
import {
  ApiError, apiError, apiJson, approvalsOfOpenRuns, defaultRuntime, routeApi, routeServeRequest, runEndedMessage, type ApiEvent, type ApiResponse, type Runtime, type ServeBackend,
} from '@stepforge/functions';

/** The REST API (v1) proxy event fields the adapter reads. */
export interface RestProxyEvent extends ApiEvent {
  readonly pathParameters?: Record<string, string | undefined> | null;
}

const FINAL = new Set(['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']);

/** The runtime answers `{error: {name, message}}`; the serve API answers `{error: {code, message}}`. */
function normalise(res: ApiResponse): ApiResponse {
  if (res.statusCode < 400) return res;
  try {
    const body = JSON.parse(res.body) as { error?: { name?: string; code?: string; message?: string } };
    if (body.error && !body.error.code) return apiJson(res.statusCode, { error: { code: body.error.name, message: body.error.message } });
  } catch {
    // not JSON: pass through
  }
  return res;
}

/** `wait: true` holds the request until the run ends: only `stepforge serve` can (API Gateway's 29 s limit). */
const noWait = () => new ApiError(501, 'not_implemented', 'wait: true is served by `stepforge serve`; on AWS, poll GET /runs/{id} until the status is final');

/** The run's Step Functions execution (ApiError 404 unknown_run, 409 no_execution when there is none). */
async function executionArnOf(rt: Runtime, id: string): Promise<string> {
  const run = await rt.runs.getRun(id);
  if (!run) throw new ApiError(404, 'unknown_run', `no run with id ${id}`);
  if (!run.executionArn) throw new ApiError(409, 'no_execution', `run ${id} has no Step Functions execution`);
  return run.executionArn;
}

/** Sub-request to the runtime's router. */
const call = (rt: Runtime, method: string, path: string, body?: unknown, query: Record<string, string | undefined> = {}) =>
  routeApi(rt, { httpMethod: method, path, queryStringParameters: query, body: body === undefined ? null : JSON.stringify(body) });

/**
 * A run record with a RUNNING status refreshed from Step Functions: an execution that has ended
 * settles the record (persisted) and the object passed in. Express executions cannot be
 * described; their status stays what the handlers recorded.
 */
async function refreshed<R extends Record<string, any>>(rt: Runtime, run: R): Promise<R> {
  if (run['status'] !== 'RUNNING' || typeof run['executionArn'] !== 'string') return run;
  const d = await rt.sfn().send(new DescribeExecutionCommand({ executionArn: run['executionArn'] })).catch(() => undefined);
  if (d?.status && FINAL.has(d.status)) {
    const output = d.output !== undefined ? (JSON.parse(d.output) as unknown) : undefined;
    const error = d.status === 'SUCCEEDED' ? undefined : { name: d.error ?? d.status, message: d.cause ?? '' };
    await rt.runs.finishRun(String(run['runId']), { status: d.status as 'SUCCEEDED', ...(output !== undefined ? { output } : {}), ...(error ? { error } : {}) });
    Object.assign(run, { status: d.status, ...(output !== undefined ? { output } : {}), ...(error ? { error } : {}) });
  }
  return run;
}

/** The run record, with a RUNNING status refreshed from Step Functions (and persisted once final). */
async function runDetails(rt: Runtime, id: string): Promise<ApiResponse> {
  const res = await call(rt, 'GET', `/runs/${encodeURIComponent(id)}`);
  if (res.statusCode !== 200) return normalise(res);
  const { run, steps, events } = JSON.parse(res.body) as { run: Record<string, any>; steps: unknown; events: unknown };
  return apiJson(200, { ...(await refreshed(rt, run)), steps, events });
}

/** The final status of a run that has ended, or undefined while it runs (or when it has no record). */
async function endedStatus(rt: Runtime, runId: string): Promise<string | undefined> {
  const run = await rt.runs.getRun(runId);
  if (!run) return undefined;
  const status = String((await refreshed(rt, { ...run } as Record<string, any>))['status']);
  return FINAL.has(status) ? status : undefined;
}

/**
 * Pending approvals, without those of runs that have ended (cancelled, timed out, failed in
 * another branch): nothing waits for them, as `stepforge serve` lists them. Other statuses as stored.
 */
async function listApprovals(rt: Runtime, status: string | undefined): Promise<ApiResponse> {
  const res = normalise(await call(rt, 'GET', '/approvals', undefined, { status }));
  if ((status ?? 'PENDING').toUpperCase() !== 'PENDING' || res.statusCode !== 200) return res;
  const { approvals } = JSON.parse(res.body) as { approvals: { runId?: string }[] };
  return apiJson(200, { approvals: await approvalsOfOpenRuns(approvals, (runId) => endedStatus(rt, runId)) });
}

/**
 * Decides an approval, as `stepforge serve` does: refused with 409 `run_ended` when its run has
 * ended (nothing waits on the token, and the decision would be recorded for a call never made).
 */
async function decide(rt: Runtime, id: string, decision: 'approve' | 'reject', comment: string | undefined): Promise<ApiResponse> {
  const approval = await rt.approvals.get(id);
  if (approval?.status === 'PENDING') {
    const status = await endedStatus(rt, approval.runId);
    if (status !== undefined) throw new ApiError(409, 'run_ended', runEndedMessage(approval.runId, status, id));
  }
  return normalise(await call(rt, 'POST', `/approvals/${encodeURIComponent(id)}/${decision}`, { by: 'api', ...(comment ? { reason: comment } : {}) }));
}

/**
 * The serve API's operations on AWS: the workflow list from the deployed state machines, starts
 * and lists through the runtime's router, live execution status (DescribeExecution), cancel
 * (StopExecution) and retry (RedriveExecution: re-runs only what did not finish). `restart --from`
 * and `wait: true` are embedded-only (501).
 */
function awsBackend(rt: Runtime): ServeBackend {
  const machines = rt.config.stateMachines;
  const known = (name: string) => {
    if (!machines[name]) throw new ApiError(404, 'unknown_workflow', `no workflow named '${name}'`);
  };
  return {
    listWorkflows: async () => apiJson(200, { workflows: Object.keys(machines).sort().map((name) => ({ name, stateMachineArn: machines[name] })) }),
    async startRun(name, body, key) {
      known(name);
      if (body.wait) throw noWait();
      return normalise(await call(rt, 'POST', '/runs', { workflow: name, input: body.input ?? {}, ...(key ? { idempotencyKey: key } : {}) }));
    },
    async listRuns(name, status) {
      known(name);
      return normalise(await call(rt, 'GET', '/runs', undefined, { workflow: name, status }));
    },
    getRun: (id) => runDetails(rt, id),
    async retry(id, body) {
      const executionArn = await executionArnOf(rt, id);
      if (body.wait) throw noWait();
      // Redrive re-runs the failed state and what follows it; finished steps are not repeated.
      await rt.sfn().send(new RedriveExecutionCommand({ executionArn }));
      await rt.runs.finishRun(id, { status: 'RUNNING' });
      return apiJson(202, { runId: id, status: 'RUNNING', redriven: true });
    },
    restart: async () => {
      throw new ApiError(501, 'not_implemented', 'restart --from STEP forks runs in the embedded stack (`stepforge runs restart`); on AWS use retry (Step Functions redrive)');
    },
    async cancel(id, body) {
      const executionArn = await executionArnOf(rt, id);
      await rt.sfn().send(new StopExecutionCommand({ executionArn, error: 'Cancelled', cause: body.reason ?? 'cancelled through the API' }));
      await rt.runs.finishRun(id, { status: 'ABORTED' });
      return apiJson(200, { runId: id, status: 'ABORTED' });
    },
    listApprovals: (status) => listApprovals(rt, status),
    decide: (id, { decision, comment }) => decide(rt, id, decision, comment),
    errorResponse(e) {
      const err = e as Error;
      rt.logger.error('api request failed', { errorName: err.name, errorMessage: err.message });
      const status = err.name === 'ExecutionDoesNotExist' ? 404 : err.name === 'ExecutionNotRedrivable' ? 409 : 500;
      return apiError(status, err.name, rt.redactor.redactText(err.message));
    },
  };
}

/**
 * Routes one API Gateway request (REST proxy integration; the routes and their body validation are
 * routeServeRequest's, shared with `stepforge serve`).
 */
export async function routeServeApi(rt: Runtime, event: RestProxyEvent): Promise<ApiResponse> {
  const headers: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(event.headers ?? {})) headers[k.toLowerCase()] = v;
  const body = event.body && event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  return routeServeRequest(awsBackend(rt), {
    method: event.httpMethod ?? 'GET',
    path: event.path ?? '/',
    query: event.queryStringParameters ?? {},
    headers,
    ...(body !== undefined ? { body } : {}),
  });
}

/** Lambda entry point (API Gateway REST proxy integration). */
export const handler = async (event: RestProxyEvent): Promise<ApiResponse> => routeServeApi(defaultRuntime(), event);
