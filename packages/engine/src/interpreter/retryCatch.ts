// Retry and Catch, written once for the states that have them (Task, Map, Parallel).
import { jsonataExit, assignPath, resultPath } from './stateIo.js';
import { stateFailure } from './StateError.js';
import { toFailure, type TaskFailure } from './TaskFailure.js';
import { Aborted, type ExecutionContext, type Obj, type StateHandler, type StateRun, type StepResult } from './ExecutionContext.js';

/** A failure as Retry/Catch see it; null Error/Cause come from SendTaskFailure without them. */
interface Failure {
  error: string;
  cause?: string;
  nullError?: boolean;
  nullCause?: boolean;
}

/** Errors `States.TaskFailed` does not match (AWS: it matches any error but these). */
const NOT_TASK_FAILED = new Set([
  'States.Timeout',
  'States.Runtime',
  'States.HeartbeatTimeout',
  'States.DataLimitExceeded',
  'States.QueryEvaluationError',
]);

/** True when a retrier's or catcher's ErrorEquals matches the error name. */
export function matchesError(errorEquals: unknown, error: string): boolean {
  if (!Array.isArray(errorEquals)) return false;
  for (const e of errorEquals) {
    if (e === error) return true;
    if (e === 'States.ALL' && error !== 'States.Runtime') return true;
    if (e === 'States.TaskFailed' && !NOT_TASK_FAILED.has(error) && !error.startsWith('States.Branch')) return true;
  }
  return false;
}

/** Runs `attempt` under the state's Retry and Catch fields. */
export async function withRetryCatch(ctx: ExecutionContext, run: StateRun, raw: unknown, attempt: StateHandler): Promise<StepResult> {
  const st = run.st;
  const retriers = (st.Retry as Obj[] | undefined) ?? [];
  const catchers = (st.Catch as Obj[] | undefined) ?? [];
  const attempts = new Array<number>(retriers.length).fill(0);
  for (;;) {
    try {
      return await attempt(ctx, run, raw);
    } catch (e0) {
      if (e0 instanceof Aborted || run.frame.signal.aborted) {
        ctx.emit(run.frame.thread, `${st.Type as string}StateAborted`);
        throw e0 instanceof Aborted ? e0 : new Aborted();
      }
      const e = stateFailure(ctx, run, e0);
      // A States.Runtime failure is never retried or caught.
      if (e !== e0 && (e as TaskFailure).error === 'States.Runtime') throw e;
      const f: Failure = toFailure(e);
      if ((e as Failure).nullError) f.nullError = true;
      if ((e as Failure).nullCause) f.nullCause = true;
      const ri = retriers.findIndex((r) => matchesError(r.ErrorEquals, f.error));
      if (ri >= 0) {
        const r = retriers[ri]!;
        const max = typeof r.MaxAttempts === 'number' ? r.MaxAttempts : 3;
        if (attempts[ri]! < max) {
          const interval = typeof r.IntervalSeconds === 'number' ? r.IntervalSeconds : 1;
          const rate = typeof r.BackoffRate === 'number' ? r.BackoffRate : 2;
          let delay = interval * Math.pow(rate, attempts[ri]!);
          if (typeof r.MaxDelaySeconds === 'number') delay = Math.min(delay, r.MaxDelaySeconds);
          if (r.JitterStrategy === 'FULL') delay = Math.random() * delay;
          attempts[ri]!++;
          run.retryCount++;
          await ctx.sleep(run, delay * 1000);
          continue;
        }
      }
      if (st.Type === 'Map' || st.Type === 'Parallel') ctx.emit(run.frame.thread, `${st.Type}StateFailed`);
      const ci = catchers.findIndex((c) => matchesError(c.ErrorEquals, f.error));
      if (ci < 0) {
        if (run.frame.parallelBranch && st.Type === 'Task') ctx.emit(run.frame.thread, 'TaskStateAborted', undefined, false);
        throw e;
      }
      return await caught(ctx, run, raw, catchers[ci]!, f);
    }
  }
}

/** A catcher's tail: its Assign, then ResultPath (JSONPath) or Output (JSONata) over the error output. */
function caught(ctx: ExecutionContext, run: StateRun, raw: unknown, c: Obj, f: Failure): StepResult | Promise<StepResult> {
  const errorOutput: Obj = { Error: f.nullError ? null : f.error };
  if (f.nullCause) errorOutput.Cause = null;
  else if (f.cause !== undefined) errorOutput.Cause = f.cause;
  else if (f.error === 'States.Timeout' || f.error === 'States.HeartbeatTimeout') errorOutput.Cause = '';
  if (run.ql === 'JSONata') return jsonataExit(ctx, run, c, raw, errorOutput, c.Next as string, { errorOutput });
  const assigned = assignPath(ctx, run, c.Assign, errorOutput);
  const output = resultPath(raw, errorOutput, c.ResultPath);
  ctx.exit(run, output, assigned);
  return { output, next: c.Next as string };
}
