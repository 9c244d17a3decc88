import { isStepforgeError } from '@stepforge/compiler';
import { ApiError, apiError, apiJson, routeServeRequest, type ServeBackend, type ServeRequest, type ServeResponse } from '@stepforge/functions';
import { OPENAPI_DOCUMENT } from './openApiDocument.js';
import type { RunService } from './RunService.js';
import { runDetailsJson, runSummary } from './runJson.js';

/** An HTTP request as `stepforge serve` hands it to the API (lower-case header names). */
export type ApiRequest = ServeRequest;
/** The API's answer: status, JSON body. */
export type ApiResponse = ServeResponse;

/** HTTP status per StepforgeError code. */
const STATUS_OF: Record<string, number> = {
  unknown_run: 404, unknown_workflow: 404, unknown_approval: 404, unknown_step: 400,
  invalid_input: 400, invalid_input_json: 400, input_too_deep: 400, input_too_large: 413, idempotency_key_conflict: 409, approval_decided: 409, run_ended: 409, run_running: 409, workflow_changed: 409,
};

/**
 * The Stepforge HTTP API (the routes API Gateway serves on AWS; routeServeRequest matches them and
 * validates bodies) over a RunService: forks for retry and restart, and `wait: true` answered when
 * the run ends.
 */
export function createHttpApi(service: RunService): (req: ApiRequest) => Promise<ApiResponse> {
  const forkAnswer = async (runId: string, parentRunId: string, wait: boolean | undefined, rerun?: string[]): Promise<ApiResponse> => {
    if (!wait) return apiJson(202, { runId, parentRunId, status: 'RUNNING', ...(rerun ? { rerun } : {}) });
    const run = await service.wait(runId);
    return apiJson(200, { runId, parentRunId, status: run.status, output: run.output ?? null, ...(rerun ? { rerun } : {}) });
  };
  const backend: ServeBackend = {
    openApi: async () => apiJson(200, OPENAPI_DOCUMENT),
    listWorkflows: async () => apiJson(200, {
      workflows: (await service.catalog.list()).map((w) => ({
        name: w.name, displayName: w.displayName ?? w.name, file: w.file ?? null, format: w.format, steps: w.steps.map((s) => s.id), input: w.inputSchema.fields,
      })),
    }),
    async startRun(name, body, key) {
      const entry = await service.catalog.get(name);
      if (!entry) throw new ApiError(404, 'unknown_workflow', `no workflow named '${name}'`);
      const started = await service.start(entry, body.input ?? {}, key !== undefined ? { idempotencyKey: key } : {});
      // A reused key started with another input: the run as it ran, saying so (as `run` does on stderr).
      const differs = started.inputDiffers ? { inputDiffers: true } : {};
      if (!body.wait) return apiJson(started.reused ? 200 : 202, { runId: started.run.runId, status: started.run.status, reused: started.reused, ...differs });
      const run = await service.wait(started.run.runId);
      return apiJson(200, { runId: run.runId, status: run.status, output: run.output ?? null, reused: started.reused, ...differs });
    },
    async listRuns(name, status) {
      // As on AWS (and as POST answers): runs of a workflow this stack does not know are a 404, not an empty list.
      if (!(await service.catalog.get(name))) throw new ApiError(404, 'unknown_workflow', `no workflow named '${name}'`);
      const s = status?.toUpperCase();
      const runs = await service.listRuns({ workflow: name, ...(s ? { status: s as 'RUNNING' } : {}) });
      return apiJson(200, { runs: runs.map(runSummary) });
    },
    getRun: async (id) => apiJson(200, runDetailsJson(await service.readableDetails(id))),
    async retry(id, body) {
      const started = await service.retry(id);
      return forkAnswer(started.run.runId, id, body.wait);
    },
    async restart(id, body) {
      const started = await service.restart(id, body.from);
      return forkAnswer(started.run.runId, id, body.wait, started.rerun);
    },
    async cancel(id, body) {
      const run = await service.cancel(id, body.reason);
      return apiJson(200, { runId: run.runId, status: run.status });
    },
    async listApprovals(status) {
      const list = await service.listApprovals((status ?? 'PENDING').toUpperCase() as 'PENDING');
      return apiJson(200, { approvals: list.map(({ taskToken: _t, ...a }) => a) });
    },
    async decide(id, body) {
      const { approval: { taskToken: _t, ...decided } } = await service.decideApproval(id, body.decision === 'approve' ? 'APPROVED' : 'REJECTED', body.comment, 'api');
      return apiJson(200, decided);
    },
    errorResponse,
  };
  return (req) => routeServeRequest(backend, req);
}

/** A StepforgeError by its code (status per STATUS_OF), anything else as 500 `internal`. */
export function errorResponse(e: unknown): ApiResponse {
  if (isStepforgeError(e)) return apiError(STATUS_OF[e.code] ?? 400, e.code, e.message, e.details ?? undefined);
  const err = e as { name?: string; message?: string };
  return apiError(500, 'internal', `${err.name ?? 'Error'}: ${err.message ?? String(e)}`);
}
