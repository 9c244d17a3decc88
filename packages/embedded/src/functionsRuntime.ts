// The embedded stack's view of @stepforge/runtime: the runtime's own types, and a lazy loader so
// that commands which never open the stack (graph, validate, compile) do not pay for loading the
// runtime and its AWS clients.
import type * as Functions from '@stepforge/runtime';

/** Records as the runtime's stores keep them. */
export type RunRecordView = Functions.RunRecord;
export type StepRecordView = Functions.StepRecord;
export type RunEventView = Functions.RunEvent;
export type ApprovalRecordView = Functions.ApprovalRecord;

/** The Runtime object (config, stores, clients) and its configuration. */
export type RuntimeLike = Functions.Runtime;
export type RuntimeConfigLike = Functions.RuntimeConfig;

/** Handlers by Lambda function name (`ModelStepFunction`, …). */
export type LocalHandlers = Readonly<Record<string, (event: unknown, context: unknown) => unknown>>;

/** The functions package, as the stack uses it. */
export type FunctionsRuntime = typeof Functions;

let cached: Promise<FunctionsRuntime> | undefined;

/** Loads @stepforge/runtime once per process. */
export function loadFunctionsRuntime(): Promise<FunctionsRuntime> {
  return (cached ??= import('@stepforge/runtime'));
}
