// Errors raised while a state runs. A RuntimeFailure's cause is prefixed with the state and
// the event id it was entered at, as AWS words it.
import type { ExecutionContext, Obj, StateRun } from './ExecutionContext.js';
import { TaskFailure } from './TaskFailure.js';

/** A States.Runtime / States.QueryEvaluationError raised inside a state; `location` is the JSONata field. */
export class RuntimeFailure extends TaskFailure {
  constructor(
    error: 'States.Runtime' | 'States.QueryEvaluationError' | 'States.IntrinsicFailure' | string,
    readonly detail: string,
    readonly location?: string,
  ) {
    super(error, detail);
  }
}

/** The state-prefixed cause AWS uses for runtime failures. */
export function runtimeCause(stateName: string, enteredEventId: number, detail: string): string {
  return `An error occurred while executing the state '${stateName}' (entered at the event id #${enteredEventId}). ${detail}`;
}

/**
 * What a state's failure becomes when it leaves the state: a RuntimeFailure turns into a
 * TaskFailure with AWS's state-prefixed cause, and a JSONata error also writes EvaluationFailed.
 * Anything else passes through unchanged.
 */
export function stateFailure(ctx: ExecutionContext, run: StateRun, e: unknown): unknown {
  if (!(e instanceof RuntimeFailure)) return e;
  const cause = runtimeCause(run.name, run.enteredId, e.detail);
  if (e.error === 'States.QueryEvaluationError') {
    const d: Obj = { cause, error: e.error, state: run.name };
    if (e.location !== undefined) d.location = e.location;
    // AWS chains EvaluationFailed to the event before StateEntered, except for Wait states.
    if (run.st.Type !== 'Wait') run.frame.thread.prev = run.prevBeforeEnter;
    ctx.emit(run.frame.thread, 'EvaluationFailed', d);
  }
  return new TaskFailure(e.error, cause);
}
