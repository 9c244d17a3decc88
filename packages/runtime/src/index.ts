// Public API of @stepforge/runtime: what the embedded stack, the CLI and the CDK app use of the step
// runtime. The Lambda entry points are files (src/handlers/<name>.ts) that infra bundles by path, not
// names of this index; everything else stays inside the package.

// Configuration, the composition root and the table.
export { runtimeConfigFromEnv, type RuntimeConfig, type ProviderName } from './config/RuntimeConfig.js';
export { Runtime } from './runtime/Runtime.js';
export { ensureTables } from './persistence/Tables.js';
export { TABLE_ACCESS, ITEM_COLLECTIONS, type TableAccess } from './persistence/tableAccess.js';
export type { RunRecord, StepRecord, RunEvent } from './persistence/RunStore.js';
export type { ApprovalRecord } from './persistence/ApprovalStore.js';
export type { WorkflowStore } from './persistence/WorkflowStore.js';
export { METRICS_NAMESPACE, type MetricName } from './logging/Telemetry.js';

// Policies, secrets, models and user functions, as the stack and the CDK app read them.
export { readPolicyText, readPolicyEnv } from './tools/PolicyDocument.js';
export { parseSecretsFile } from './secrets/SecretResolver.js';
export { LocalProvider } from './providers/LocalProvider.js';
export { parseModelSpec } from './providers/parseModelSpec.js';
export { modelSettings } from './steps/modelSettings.js';
export { checkCandidate } from './steps/checkCandidate.js';
export { resolveUserFunction } from './userfn/resolveUserFunction.js';
export { pythonSourceDir } from './userfn/pythonSourceDir.js';
export { importFile } from './userfn/importFile.js';

// The same handlers, in process, for the embedded engine.
export { createLocalHandlers } from './createLocalHandlers.js';

// The one run service, its ports and the SFN adapter, and what the faces show of a run.
export type { Executions, ExecutionEnd, WorkflowCatalog, WorkflowEntry, CatalogStep } from './runs/ports.js';
export { RunService, type RunDetails, type StartedRun, type StartOptions } from './runs/RunService.js';
export { sfnExecutions } from './runs/sfnExecutions.js';
export { runExecutionArn, shownExecutionArn } from './runs/runExecutionArn.js';
export { sfnSdk, type SfnSdk } from './runtime/sfnClient.js';
export { workflowRecord, workflowRecordProblem, type WorkflowRecord } from './runs/workflowRecord.js';
export { computeStepProgress, type StepProgress, type StepState, type ProgressStep } from './runs/StepProgress.js';
export { tokensOf, answerRecord, recordsByStep } from './runs/stepProgressFromRecords.js';
export { readableCause } from './runs/readableCause.js';
export { truncate, recordlessOutput, runDetailsJson, runSummary } from './runs/runJson.js';
export { expireDueApprovals } from './approvals/approvals.js';

// The one HTTP router and its backend over the run service (`stepforge serve`; API Gateway's entry is handlers/api.ts).
export { routeRequest, errorAnswer, type ServeRequest, type ServeResponse } from './http/routeRequest.js';
export { runServiceBackend } from './http/runServiceBackend.js';
