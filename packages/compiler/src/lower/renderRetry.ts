// Retry and Catch rendering (cf. aws-cdk-lib's renderRetryCatch): every Lambda Task gets the
// transient-error retrier first, then the step's own policy, then a Catch that ends the run failed
// with the step's error and name.
import type { IrRetry } from '../ir/Ir.js';

/** Errors the Lambda service itself raises; always safe to retry. */
export const TRANSIENT_LAMBDA_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
] as const;

/**
 * The default retrier for transient Lambda errors (with full jitter): 3 retries 1 s, 2 s, 4 s apart
 * (at most). Those are ASL's defaults for IntervalSeconds / MaxAttempts / BackoffRate, so the
 * rendered retrier states only the errors and the jitter — it is repeated in every Lambda Task.
 */
export const DEFAULT_LAMBDA_RETRY = {
  ErrorEquals: [...TRANSIENT_LAMBDA_ERRORS],
  IntervalSeconds: 1,
  MaxAttempts: 3,
  BackoffRate: 2,
  JitterStrategy: 'FULL',
} as const;

/** ASL's defaults for a retrier's fields (States Language spec). */
const ASL_RETRY_DEFAULTS: Readonly<Record<string, number>> = { IntervalSeconds: 1, MaxAttempts: 3, BackoffRate: 2 };

/**
 * The transient retrier as rendered (only the fields that differ from ASL's defaults), made once and
 * frozen: every Lambda Task of every definition holds this same object, so a 1,000-step definition
 * carries one retrier instead of a thousand copies for the collector to move while it is built.
 * Frozen, so a caller that edits a definition's retrier in place fails loudly instead of editing
 * every Task's.
 */
const TRANSIENT_RETRIER: Readonly<Record<string, unknown>> = Object.freeze({
  ErrorEquals: Object.freeze([...DEFAULT_LAMBDA_RETRY.ErrorEquals]),
  ...Object.fromEntries(Object.entries(DEFAULT_LAMBDA_RETRY).filter(([k, v]) => k !== 'ErrorEquals' && ASL_RETRY_DEFAULTS[k] !== v)),
});

/** `Retry` of a Task without a policy of its own: the transient retrier alone (shared and frozen, as it is). */
const TRANSIENT_ONLY: readonly Record<string, unknown>[] = Object.freeze([TRANSIENT_RETRIER]);

/** ASL `Retry` entries for a step: the transient retrier, then the source's policy (if any). */
export function renderRetry(policy: IrRetry | undefined): Record<string, unknown>[] {
  if (policy === undefined || policy.maxAttempts <= 1) return TRANSIENT_ONLY as Record<string, unknown>[];
  return [
    TRANSIENT_RETRIER as Record<string, unknown>,
    dropUndefined({
      // States.TaskFailed matches any task error except timeouts; a source list narrows it.
      ErrorEquals: policy.errors !== undefined && policy.errors.length > 0 ? [...policy.errors] : ['States.TaskFailed', 'States.Timeout'],
      IntervalSeconds: Math.max(1, Math.ceil(policy.intervalSeconds)),
      MaxAttempts: policy.maxAttempts - 1,
      BackoffRate: policy.backoffRate,
      MaxDelaySeconds: policy.maxDelaySeconds === undefined ? undefined : Math.max(1, Math.ceil(policy.maxDelaySeconds)),
      JitterStrategy: policy.jitter ? 'FULL' : 'NONE',
    }),
  ];
}

/** Worst-case attempts of one Task (first try plus every retrier exhausted). */
export function worstCaseAttempts(policy: IrRetry | undefined): number {
  return 1 + DEFAULT_LAMBDA_RETRY.MaxAttempts + (policy !== undefined && policy.maxAttempts > 1 ? policy.maxAttempts - 1 : 0);
}

/** Returns a copy without undefined-valued keys (ASL rejects `null` where a field is optional). */
export function dropUndefined<T extends Record<string, unknown>>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as T;
}
