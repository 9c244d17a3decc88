// The request bodies of the Stepforge HTTP API (the routes API Gateway serves on AWS and
// `stepforge serve` serves locally), with the one parser both use, so a body the embedded API
// refuses is refused on AWS with the same code and message. The OpenAPI document's schemas are
// generated from these.
import { MAX_IDEMPOTENCY_KEY_LENGTH, MAX_INPUT_DEPTH, inputDepthError } from './runStart.js';
import * as z from 'zod';

const StartRunBody = z.strictObject({
  input: z.record(z.string(), z.unknown()).optional(),
  idempotencyKey: z.string().min(1).max(MAX_IDEMPOTENCY_KEY_LENGTH).optional(),
  wait: z.boolean().optional(),
});
const RestartBody = z.strictObject({ from: z.string().min(1).max(256), wait: z.boolean().optional() });
const RetryBody = z.strictObject({ wait: z.boolean().optional() });
const CancelBody = z.strictObject({
  reason: z
    .string()
    .regex(/\S/, { error: 'a reason must say why the run is cancelled (not only spaces); leave it out to record "cancelled by the user"' })
    .max(2000)
    .optional(),
});
const DecisionBody = z.strictObject({ decision: z.enum(['approve', 'reject']), comment: z.string().max(2000).optional() });

/**
 * What a refusal for unrecognised fields adds, per schema, when the body looks like the usual
 * mistake: a start-run body with no `input` that holds the workflow's input fields themselves
 * (`{"topic": …}`). A body with `input` and an unknown field beside it is a misspelling, and gets
 * no hint.
 */
const UNRECOGNISED_HINTS = new Map<unknown, (keys: readonly string[], body: Record<string, unknown>) => string | undefined>([
  [
    StartRunBody,
    (keys, body) =>
      'input' in body
        ? undefined
        : `the workflow's input goes under "input", e.g. {"input": {${keys.map((k) => `${JSON.stringify(k)}: …`).join(', ')}}}`,
  ],
]);

/** A request body schema (one of API_BODIES). */
export type ApiBodySchema<T> = z.ZodType<T>;

/** The request body schemas, by name. */
export const API_BODIES = { StartRunBody, RestartBody, RetryBody, CancelBody, DecisionBody } as const;

/** A refused body: `invalid_json` (not JSON), `input_too_deep` (nested deeper than a run's input may be) or `invalid_request` (not the route's shape), always HTTP 400. */
export interface ApiBodyError {
  readonly code: 'invalid_json' | 'input_too_deep' | 'invalid_request';
  readonly message: string;
  /** zod's issues, for `invalid_request`. */
  readonly issues?: readonly z.core.$ZodIssue[];
}

/**
 * Parses and validates a request body. An absent or blank body is `{}` (every route's fields are
 * optional or the schema says which are not); anything else must be JSON of the route's shape.
 */
export function parseApiBody<T>(
  schema: ApiBodySchema<T>,
  text: string | null | undefined,
): { ok: true; value: T } | { ok: false; error: ApiBodyError } {
  let raw: unknown = {};
  if (text !== undefined && text !== null && text.trim() !== '') {
    try {
      raw = JSON.parse(text);
    } catch (e) {
      return { ok: false, error: { code: 'invalid_json', message: `the request body is not valid JSON: ${(e as Error).message}` } };
    }
  }
  // The body holds the input one level down; deeper than that, validating it would overflow the stack.
  const tooDeep = inputDepthError(raw, MAX_INPUT_DEPTH + 1);
  if (tooDeep !== undefined) {
    return {
      ok: false,
      error: {
        code: 'input_too_deep',
        message: `the request body is nested more than ${MAX_INPUT_DEPTH + 1} levels deep: a run's input may nest at most ${MAX_INPUT_DEPTH} levels`,
      },
    };
  }
  const r = schema.safeParse(raw);
  if (r.success) return { ok: true, value: r.data };
  const issues = r.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`);
  const unrecognised = r.error.issues.flatMap((i) => (i.code === 'unrecognized_keys' && i.path.length === 0 ? i.keys : []));
  const hint = unrecognised.length > 0 ? UNRECOGNISED_HINTS.get(schema)?.(unrecognised, raw as Record<string, unknown>) : undefined;
  const advice = hint ? ` (${hint})` : '';
  return {
    ok: false,
    error: { code: 'invalid_request', message: `invalid request body: ${issues.join('; ')}${advice}`, issues: r.error.issues },
  };
}
