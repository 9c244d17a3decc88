import { TaskFailure } from '../interpreter/TaskFailure.js';

/** The parts of an AWS SDK v3 service exception this module reads. */
interface SdkError {
  name?: string;
  message?: string;
  Code?: string;
  $metadata?: { httpStatusCode?: number; requestId?: string };
}

/** The error code of an SDK exception, without the query-compatibility prefix some services add. */
export function sdkErrorCode(e: unknown): string {
  const err = e as SdkError;
  const raw = err.Code ?? err.name ?? 'UnknownError';
  return raw.replace(/^AWS\.SimpleQueueService\./, '').replace(/^com\.amazon[^#]*#/, '');
}

/** True when the error came back from the service (an HTTP status), false for a network/client failure. */
export function isServiceError(e: unknown): boolean {
  return typeof (e as SdkError)?.$metadata?.httpStatusCode === 'number';
}

/**
 * How an optimized integration (`arn:aws:states:::sqs:…`, `…:::dynamodb:…`) reports a service
 * error: Step Functions runs the Java SDK v1, so the Error is `<Prefix>.<exception class>` — the
 * specific class when the SDK has one, else the service's base class — and the Cause is the
 * SDK's message format.
 */
export function optimizedServiceFailure(
  e: unknown,
  service: { prefix: string; sdkService: string; baseClass: string; classes: ReadonlySet<string> },
): TaskFailure {
  const err = e as SdkError;
  if (!isServiceError(e)) {
    return new TaskFailure(`${service.prefix}.SdkClientException`, `Unable to execute HTTP request: ${err?.message ?? String(e)}`);
  }
  const code = sdkErrorCode(e);
  const status = err.$metadata?.httpStatusCode ?? 400;
  const cls = service.classes.has(code) ? code : service.classes.has(`${code}Exception`) ? `${code}Exception` : service.baseClass;
  const cause = `${err.message ?? ''} (Service: ${service.sdkService}; Status Code: ${status}; Error Code: ${code}; Request ID: ${err.$metadata?.requestId ?? ''}; Proxy: null)`;
  return new TaskFailure(`${service.prefix}.${cls}`, cause);
}

/**
 * How an AWS SDK integration (`arn:aws:states:::aws-sdk:<service>:<action>`) reports a service
 * error: the Java SDK v2 naming, `<Service>.<Exception>` with `<Service>Exception` as the base.
 */
export function awsSdkServiceFailure(
  e: unknown,
  service: { prefix: string; baseClass: string; classes: ReadonlySet<string> },
): TaskFailure {
  const err = e as SdkError;
  if (!isServiceError(e)) {
    return new TaskFailure(`${service.prefix}.SdkClientException`, `Unable to execute HTTP request: ${err?.message ?? String(e)}`);
  }
  const code = sdkErrorCode(e);
  const status = err.$metadata?.httpStatusCode ?? 400;
  const cls = service.classes.has(code) ? code : service.classes.has(`${code}Exception`) ? `${code}Exception` : service.baseClass;
  return new TaskFailure(
    `${service.prefix}.${cls}`,
    `${err.message ?? ''} (Service: ${service.prefix}, Status Code: ${status}, Request ID: ${err.$metadata?.requestId ?? ''})`,
  );
}

/** Makes an SDK output plain JSON: bytes become base64, dates ISO strings. */
export function toJsonValue(v: unknown): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Set) return [...v].map(toJsonValue);
  if (Array.isArray(v)) return v.map(toJsonValue);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined && k !== '$metadata') out[k] = toJsonValue(x);
    return out;
  }
  return v;
}
