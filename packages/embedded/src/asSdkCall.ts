import { isSfnApiError } from '@stepforge/engine';

/**
 * Runs an ExecutionManager action in the process that owns the engine, its API error thrown (or
 * its promise rejected) as the SDK throws the API's answer: `name` the error type, a client fault,
 * the status the API server would have sent. Callers then handle the engine in process and over
 * loopback alike (the run service fails a run whose start the engine refused, startRefused).
 */
export function asSdkCall<T>(action: () => T): T {
  try {
    const answer = action();
    return (answer instanceof Promise ? answer.catch((e: unknown) => Promise.reject(sdkError(e))) : answer) as T;
  } catch (e) {
    throw sdkError(e);
  }
}

function sdkError(e: unknown): unknown {
  if (!isSfnApiError(e)) return e;
  return Object.assign(new Error(e.message), { name: e.type, $fault: 'client', $metadata: { httpStatusCode: e.status } });
}
