// The one error wire shape of the HTTP API (`stepforge serve` and API Gateway alike, and the same
// fields as the CLI's `--json` errors), and the one table of HTTP statuses by error code.

/** What every refused or failed request answers. */
export interface ErrorBody {
  readonly error: {
    /** A stable, machine-matchable code (`unknown_run`, `invalid_request`, …). */
    readonly code: string;
    readonly message: string;
    /** What the code's detail is, where it has one (the refused body's zod issues, the run id, …). */
    readonly details?: unknown;
  };
}

/**
 * The HTTP status of each error code. The router's own codes (no route, wrong method, a refused
 * body), then the codes the run service throws (StepforgeError codes). A code that is not here is
 * a refusal of what the client sent: 400.
 */
export const HTTP_STATUS_OF: Readonly<Record<string, number>> = {
  // the router's
  not_found: 404,
  method_not_allowed: 405,
  invalid_json: 400,
  invalid_request: 400,
  input_too_deep: 400,
  internal: 500,
  // serve's own, before a request reaches the router
  unauthorized: 401,
  forbidden: 403,
  request_too_large: 413,
  // the run service's
  unknown_run: 404,
  unknown_workflow: 404,
  unknown_approval: 404,
  unknown_step: 400,
  ambiguous_step: 400,
  invalid_input: 400,
  invalid_input_json: 400,
  invalid_idempotency_key: 400,
  input_too_large: 413,
  idempotency_key_conflict: 409,
  approval_decided: 409,
  run_ended: 409,
  run_running: 409,
  run_not_started: 409,
  nothing_to_resolve: 409,
  workflow_changed: 409,
  stack_closed: 503,
};

/** The status an error code answers with (400 for a code the table does not list). */
export function httpStatusOf(code: string): number {
  return HTTP_STATUS_OF[code] ?? 400;
}

/** The error body. */
export function errorBody(code: string, message: string, details?: unknown): ErrorBody {
  return { error: { code, message, ...(details !== undefined ? { details } : {}) } };
}
