// Errors raised while a state runs. A RuntimeFailure's cause is prefixed with the state and
// the event id it was entered at, as AWS words it.
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
