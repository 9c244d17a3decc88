import { isStepforgeError } from '@stepforge/compiler';
import { API_BODIES, parseApiBody, type ApiBodySchema } from '@stepforge/functions';
import { OPENAPI_DOCUMENT } from './openApiDocument.js';
import type { RunService } from './RunService.js';
import { runDetailsJson, runSummary } from './runJson.js';

/** An HTTP request as API Gateway's HTTP API (payload 2.0) hands it over, reduced to what routes use. */
export interface ApiRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body?: string;
}

/** The response: status, JSON body. */
export interface ApiResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

const { StartRunBody, RestartBody, RetryBody, CancelBody, DecisionBody } = API_BODIES;

/** An error the API answers with: `{"error":{"code","message"}}`. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(readonly statusCode: number, readonly code: string, message: string, readonly details?: unknown) {
    super(message);
  }
}

const json = (statusCode: number, body: unknown): ApiResponse => ({
  statusCode,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** HTTP status per StepforgeError code. */
const STATUS_OF: Record<string, number> = {
  unknown_run: 404, unknown_workflow: 404, unknown_approval: 404, unknown_step: 400,
  invalid_input: 400, invalid_input_json: 400, approval_decided: 409,
};

/** The request's body, validated (ApiError `invalid_json` / `invalid_request`, 400, as on AWS). */
function parseBody<T>(schema: ApiBodySchema<T>, req: ApiRequest): T {
  const r = parseApiBody(schema, req.body);
  if (!r.ok) throw new ApiError(400, r.error.code, r.error.message, r.error.issues);
  return r.value;
}

type Route = { method: string; pattern: RegExp; handle: (req: ApiRequest, params: string[]) => Promise<ApiResponse> };

/**
 * The Stepforge HTTP API (the routes API Gateway serves on AWS), over a RunService. Every error
 * answers `{"error":{"code","message"}}` with a fitting status; request bodies are validated
 * strictly (zod), so a misspelt field is a 400, not silently ignored.
 */
export function createHttpApi(service: RunService): (req: ApiRequest) => Promise<ApiResponse> {
  const routes: Route[] = [
    { method: 'GET', pattern: /^\/openapi\.json$/, handle: async () => json(200, OPENAPI_DOCUMENT) },
    {
      method: 'GET', pattern: /^\/workflows$/, handle: async () => json(200, {
        workflows: (await service.catalog.list()).map((w) => ({
          name: w.name, file: w.file ?? null, format: w.format, steps: w.steps.map((s) => s.id), input: w.inputSchema.fields,
        })),
      }),
    },
    {
      method: 'POST', pattern: /^\/workflows\/([^/]+)\/runs$/, handle: async (req, [name]) => {
        const body = parseBody(StartRunBody, req);
        const entry = await service.catalog.get(name!);
        if (!entry) throw new ApiError(404, 'unknown_workflow', `no workflow named '${name}'`);
        const key = req.headers['idempotency-key'] ?? body.idempotencyKey;
        const started = await service.start(entry, body.input ?? {}, key !== undefined ? { idempotencyKey: key } : {});
        if (!body.wait) return json(started.reused ? 200 : 202, { runId: started.run.runId, status: started.run.status, reused: started.reused });
        const run = await service.wait(started.run.runId);
        return json(200, { runId: run.runId, status: run.status, output: run.output ?? null, reused: started.reused });
      },
    },
    {
      method: 'GET', pattern: /^\/workflows\/([^/]+)\/runs$/, handle: async (req, [name]) => {
        const status = req.query.status?.toUpperCase();
        const runs = await service.runs.listRuns({ workflow: name!, ...(status ? { status: status as 'RUNNING' } : {}) });
        return json(200, { runs: runs.map(runSummary) });
      },
    },
    { method: 'GET', pattern: /^\/runs\/([^/]+)$/, handle: async (_req, [id]) => json(200, runDetailsJson(await service.details(id!))) },
    {
      method: 'POST', pattern: /^\/runs\/([^/]+)\/retry$/, handle: async (req, [id]) => {
        const body = parseBody(RetryBody, req);
        const started = await service.retry(id!);
        return forkAnswer(service, started.run.runId, id!, body.wait);
      },
    },
    {
      method: 'POST', pattern: /^\/runs\/([^/]+)\/restart$/, handle: async (req, [id]) => {
        const body = parseBody(RestartBody, req);
        const started = await service.restart(id!, body.from);
        return forkAnswer(service, started.run.runId, id!, body.wait, started.rerun);
      },
    },
    {
      method: 'POST', pattern: /^\/runs\/([^/]+)\/cancel$/, handle: async (req, [id]) => {
        const body = parseBody(CancelBody, req);
        const run = await service.cancel(id!, body.reason);
        return json(200, { runId: run.runId, status: run.status });
      },
    },
    {
      method: 'GET', pattern: /^\/approvals$/, handle: async (req) => {
        const status = (req.query.status ?? 'PENDING').toUpperCase() as 'PENDING';
        const list = await service.listApprovals(status);
        return json(200, { approvals: list.map(({ taskToken: _t, ...a }) => a) });
      },
    },
    {
      method: 'POST', pattern: /^\/approvals\/([^/]+)$/, handle: async (req, [id]) => {
        const body = parseBody(DecisionBody, req);
        const decided = await service.decideApproval(id!, body.decision === 'approve' ? 'APPROVED' : 'REJECTED', body.comment);
        const { taskToken: _t, ...rest } = decided;
        return json(200, rest);
      },
    },
  ];

  return async (req) => {
    try {
      const path = req.path.replace(/\/+$/, '') || '/';
      let allowed = false;
      for (const r of routes) {
        const m = r.pattern.exec(path);
        if (!m) continue;
        if (r.method !== req.method.toUpperCase()) { allowed = true; continue; }
        return await r.handle(req, m.slice(1).map(decodeURIComponent));
      }
      if (allowed) throw new ApiError(405, 'method_not_allowed', `${req.method} is not allowed on ${path}`);
      throw new ApiError(404, 'not_found', `no route for ${req.method} ${path}`);
    } catch (e) {
      return errorResponse(e);
    }
  };
}

async function forkAnswer(service: RunService, runId: string, parentRunId: string, wait: boolean | undefined, rerun?: string[]): Promise<ApiResponse> {
  if (!wait) return json(202, { runId, parentRunId, status: 'RUNNING', ...(rerun ? { rerun } : {}) });
  const run = await service.wait(runId);
  return json(200, { runId, parentRunId, status: run.status, output: run.output ?? null, ...(rerun ? { rerun } : {}) });
}

/** Any thrown error as `{"error":{"code","message"}}`. */
export function errorResponse(e: unknown): ApiResponse {
  if (e !== null && typeof e === 'object' && (e as { name?: unknown }).name === 'ApiError') {
    const a = e as ApiError;
    return json(a.statusCode, { error: { code: a.code, message: a.message, ...(a.details !== undefined ? { details: a.details } : {}) } });
  }
  if (isStepforgeError(e)) {
    return json(STATUS_OF[e.code] ?? 400, { error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) } });
  }
  const err = e as { name?: string; message?: string };
  return json(500, { error: { code: 'internal', message: `${err.name ?? 'Error'}: ${err.message ?? String(e)}` } });
}
