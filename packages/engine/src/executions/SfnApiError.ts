/**
 * An error of the Step Functions API (`StateMachineDoesNotExist`, `ExecutionAlreadyExists`, …).
 * The server sends it as `{"__type": type, "message": message}` with HTTP 400; match on `type`.
 */
export class SfnApiError extends Error {
  override readonly name = 'SfnApiError';
  constructor(
    readonly type: string,
    message: string,
    readonly status: number = 400,
  ) {
    super(message);
  }
}

/** True for an SfnApiError (by name, bundles duplicate classes). */
export function isSfnApiError(e: unknown): e is SfnApiError {
  return (
    typeof e === 'object' &&
    e !== null &&
    (e as { name?: unknown }).name === 'SfnApiError' &&
    typeof (e as { type?: unknown }).type === 'string'
  );
}
