/**
 * Why a start whose idempotency key names an earlier run cannot be answered with it: that run is
 * of another workflow (a key names one run). Undefined when it is the same workflow's.
 */
export function idempotencyKeyConflict(
  key: string | undefined,
  run: { readonly runId: string; readonly workflow: string },
  workflow: string,
): string | undefined {
  if (run.workflow === workflow) return undefined;
  return `idempotency key '${key}' names run ${run.runId} of workflow '${run.workflow}', not a run of '${workflow}'`;
}
