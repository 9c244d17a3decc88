import type { RunRecord } from '../persistence/RunStore.js';

/**
 * The ARN of a run's execution, which is named after the run id (RunService.start). A run written
 * by an earlier version under the run id of an idempotency key that a killed start had claimed
 * (before writing its run) carries the ARN of the id the later start had asked for: an execution
 * that is never started. Its own id names the execution that start did start, so the ARN is taken
 * with it, and such a run settles instead of being waited for until run_not_started.
 */
export function runExecutionArn(run: Pick<RunRecord, 'runId' | 'workflow' | 'executionArn'>): string {
  const arn = run.executionArn;
  if (arn === undefined) return `arn:aws:states:us-east-1:123456789012:execution:${run.workflow}:${run.runId}`;
  return arn.endsWith(`:${run.runId}`) ? arn : `${arn.slice(0, arn.lastIndexOf(':'))}:${run.runId}`;
}

/**
 * The execution ARN to show for a run (`runs show --json`, the HTTP API, the view, a trigger's
 * answer): its execution's, as runExecutionArn finds it, or undefined when the run records none.
 */
export function shownExecutionArn(run: Pick<RunRecord, 'runId' | 'workflow' | 'executionArn'>): string | undefined {
  return run.executionArn === undefined ? undefined : runExecutionArn(run);
}
