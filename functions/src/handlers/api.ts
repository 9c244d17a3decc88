import middy from '@middy/core';
import { isRuntimeError } from '../errors/RuntimeError.js';
import { logStep, redactSecrets } from '../middleware/middlewares.js';
import type { StepContext } from '../middleware/defineMiddleware.js';
import type { RunStatus } from '../persistence/RunStore.js';
import type { Runtime } from '../runtime/Runtime.js';
import { startWorkflowRun } from '../runs/startWorkflowRun.js';
import { resolveApproval } from '../steps/toolStep.js';
import { lazyHandler, type StepHandler } from './stepHandler.js';

/** The subset of an API Gateway proxy event (REST v1 or HTTP API v2) the api handler reads. */
export interface ApiEvent {
  httpMethod?: string;
  path?: string;
  rawPath?: string;
  requestContext?: { http?: { method?: string; path?: string } };
  queryStringParameters?: Record<string, string | undefined> | null;
  headers?: Record<string, string | undefined> | null;
  body?: string | null;
  isBase64Encoded?: boolean;
}

/** An API Gateway proxy response. */
export interface ApiResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

const reply = (statusCode: number, body: unknown): ApiResponse => ({ statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

const STATUS_OF: Record<string, number> = { NotFound: 404, InvalidInput: 400, InvalidEnvelope: 400, PolicyDenied: 409, IdempotencyKeyConflict: 409, ConfigError: 500 };

/**
 * Routes: `POST /runs` {workflow, input, idempotencyKey} (or an `Idempotency-Key` header),
 * `GET /runs?workflow=&status=`, `GET /runs/{id}` (run, steps, events), `GET /approvals?status=`,
 * `POST /approvals/{id}/approve|reject` {by, reason}.
 */
export async function routeApi(rt: Runtime, event: ApiEvent): Promise<ApiResponse> {
  const method = (event.httpMethod ?? event.requestContext?.http?.method ?? 'GET').toUpperCase();
  const path = (event.path ?? event.rawPath ?? event.requestContext?.http?.path ?? '/').replace(/\/+$/, '') || '/';
  const q = event.queryStringParameters ?? {};
  let body: Record<string, unknown> = {};
  if (event.body) {
    try {
      const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return reply(400, { error: { name: 'InvalidInput', message: 'request body is not JSON' } });
    }
  }
  const header = (n: string) => Object.entries(event.headers ?? {}).find(([k]) => k.toLowerCase() === n)?.[1];
  try {
    let m: RegExpExecArray | null;
    if (method === 'POST' && path === '/runs') {
      if (typeof body.workflow !== 'string') return reply(400, { error: { name: 'InvalidInput', message: '"workflow" is required' } });
      const key = typeof body.idempotencyKey === 'string' ? body.idempotencyKey : header('idempotency-key');
      const started = await startWorkflowRun(rt, { workflow: body.workflow, input: body.input ?? {}, ...(key ? { idempotencyKey: key } : {}) });
      return reply(started.reused ? 200 : 202, started);
    }
    if (method === 'GET' && path === '/runs') {
      const runs = await rt.runs.listRuns({
        ...(q.workflow ? { workflow: q.workflow } : {}), ...(q.status ? { status: q.status.toUpperCase() as RunStatus } : {}),
        ...(q.limit ? { limit: Number(q.limit) } : {}),
      });
      return reply(200, { runs });
    }
    if (method === 'GET' && (m = /^\/runs\/([^/]+)$/.exec(path))) {
      const runId = decodeURIComponent(m[1] as string);
      const run = await rt.runs.getRun(runId);
      if (!run) return reply(404, { error: { name: 'NotFound', message: `no run with id ${runId}` } });
      const [steps, events] = await Promise.all([rt.runs.listSteps(runId), rt.runs.listEvents(runId)]);
      return reply(200, { run, steps, events });
    }
    if (method === 'GET' && path === '/approvals') {
      const approvals = await rt.approvals.list((q.status?.toUpperCase() ?? 'PENDING') as 'PENDING');
      return reply(200, { approvals: approvals.map(({ taskToken: _t, ...a }) => a) });
    }
    if (method === 'POST' && (m = /^\/approvals\/([^/]+)\/(approve|reject)$/.exec(path))) {
      const r = await resolveApproval(rt, decodeURIComponent(m[1] as string), m[2] === 'approve' ? 'APPROVED' : 'REJECTED',
        typeof body.by === 'string' ? body.by : 'api', typeof body.reason === 'string' ? body.reason : undefined);
      return reply(200, r);
    }
    return reply(404, { error: { name: 'NotFound', message: `no route ${method} ${path}` } });
  } catch (e) {
    const err = e as Error;
    const status = isRuntimeError(err) ? STATUS_OF[err.name] ?? 500 : 500;
    rt.logger.error('api request failed', { errorName: err.name, errorMessage: err.message });
    return reply(status, { error: { name: err.name, message: rt.redactor.redactText(err.message) } });
  }
}

/** The API Gateway handler. */
export function createApiHandler(rt: Runtime): StepHandler {
  const h = middy<unknown, unknown, Error, StepContext>(async (event: unknown) => routeApi(rt, event as ApiEvent))
    .use(logStep({ runtime: rt, handler: 'api' }))
    .use(redactSecrets({ runtime: rt }));
  return (event, context) => h(event, { ...((context as object | undefined) ?? {}) } as StepContext);
}

/** Lambda entry point. */
export const handler = lazyHandler(createApiHandler);
