/** A failure raised by a state or task: becomes the state's Error/Cause, matched by Retry/Catch. */
export class TaskFailure extends Error {
  override readonly name = 'TaskFailure';
  /** SendTaskFailure without an error: AWS records a null Error (a Catch's error output has `Error: null`). */
  declare nullError?: boolean;
  /** SendTaskFailure without a cause: AWS records a null Cause. */
  declare nullCause?: boolean;
  constructor(
    readonly error: string,
    override readonly cause?: string,
  ) {
    super(cause === undefined ? error : `${error}: ${cause}`);
  }
}

/** True for anything shaped like a TaskFailure (matched by name, bundles duplicate classes). */
export function isTaskFailure(e: unknown): e is TaskFailure {
  return (
    typeof e === 'object' &&
    e !== null &&
    (e as { name?: unknown }).name === 'TaskFailure' &&
    typeof (e as { error?: unknown }).error === 'string'
  );
}

/** Turns anything thrown by a resource into {error, cause}: a TaskFailure, `{error, cause}`, or an Error (its `name`). */
export function toFailure(e: unknown): { error: string; cause?: string } {
  if (isTaskFailure(e)) return { error: e.error, ...(e.cause !== undefined ? { cause: e.cause } : {}) };
  if (typeof e === 'object' && e !== null) {
    const o = e as { error?: unknown; name?: unknown; cause?: unknown; message?: unknown };
    const error = typeof o.error === 'string' ? o.error : typeof o.name === 'string' ? o.name : 'Error';
    const cause = typeof o.cause === 'string' ? o.cause : typeof o.message === 'string' ? o.message : undefined;
    return { error, ...(cause !== undefined ? { cause } : {}) };
  }
  return { error: 'Error', cause: String(e) };
}
