// The HTTP API's operations over the run service: one backend for `stepforge serve` and the API
// Gateway Lambda, so a route answers the same on both (forks for retry and restart, `wait: true`
// answered when the run ends).
import { apiJson, type ServeBackend, type ServeResponse } from './routeRequest.js';
import { publicApproval } from '../approvals/approvals.js';
import type { RunRecord } from '../persistence/RunStore.js';
import { runDetailsJson, runSummary } from '../runs/runJson.js';
import type { RunService } from '../runs/RunService.js';

/** How the backend answers beyond the run service. */
export interface RunServiceBackendOptions {
  /** The OpenAPI document `GET /openapi.json` answers (absent: no such route). */
  readonly openApi?: unknown;
  /**
   * The longest a `wait: true` request is held, in ms (absent: until the run ends). API Gateway
   * ends a request after 29 s; a run still running then is answered as a start without `wait` is
   * (202, RUNNING), and the client polls GET /runs/{id}.
   */
  readonly waitLimitMs?: number;
}

/** The run service's operations behind the router (routeRequest.ts). */
export function runServiceBackend(service: RunService, options: RunServiceBackendOptions = {}): ServeBackend {
  /** The run once it has ended, or undefined when it still runs after waitLimitMs. */
  const waitFor = async (runId: string): Promise<RunRecord | undefined> => {
    if (options.waitLimitMs === undefined) return service.wait(runId);
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), options.waitLimitMs)));
    try {
      return await Promise.race([service.wait(runId), limit]);
    } finally {
      clearTimeout(timer);
    }
  };
  const forkAnswer = async (runId: string, parentRunId: string, wait: boolean | undefined, rerun?: string[]): Promise<ServeResponse> => {
    const running = () => apiJson(202, { runId, parentRunId, status: 'RUNNING', ...(rerun ? { rerun } : {}) });
    if (!wait) return running();
    const run = await waitFor(runId);
    if (!run) return running();
    return apiJson(200, { runId, parentRunId, status: run.status, output: run.output ?? null, ...(rerun ? { rerun } : {}) });
  };
  return {
    ...(options.openApi !== undefined ? { openApi: async () => apiJson(200, options.openApi) } : {}),
    listWorkflows: async () =>
      apiJson(200, {
        workflows: (await service.catalog.list()).map((w) => ({
          name: w.name,
          displayName: w.displayName ?? w.name,
          file: w.file ?? null,
          format: w.format ?? null,
          steps: w.steps.map((s) => s.id),
          input: w.inputSchema.fields,
        })),
      }),
    async startRun(name, body, key) {
      const entry = await service.workflow(name);
      const started = await service.start(entry, body.input ?? {}, key !== undefined ? { idempotencyKey: key } : {});
      // A reused key started with another input: the run as it ran, saying so (as `run` does on stderr).
      const differs = started.inputDiffers ? { inputDiffers: true } : {};
      const answer = () =>
        apiJson(started.reused ? 200 : 202, { runId: started.run.runId, status: started.run.status, reused: started.reused, ...differs });
      if (!body.wait) return answer();
      const run = await waitFor(started.run.runId);
      if (!run) return answer();
      return apiJson(200, { runId: run.runId, status: run.status, output: run.output ?? null, reused: started.reused, ...differs });
    },
    async listRuns(name, status) {
      // Runs of a workflow there is not are a 404, not an empty list (as POST answers).
      await service.workflow(name);
      const runs = await service.listRuns({ workflow: name, ...(status ? { status: status as RunRecord['status'] } : {}) });
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
      const list = await service.listApprovals((status ?? 'PENDING') as 'PENDING');
      return apiJson(200, { approvals: list.map(publicApproval) });
    },
    async decide(id, body) {
      const { approval } = await service.decideApproval(id, body.decision === 'approve' ? 'APPROVED' : 'REJECTED', body.comment, 'api');
      return apiJson(200, publicApproval(approval));
    },
  };
}
