// The routes of the Stepforge HTTP API (docs/openapi.json), once, for both places that serve them:
// `stepforge serve` (over the embedded stack's RunService) and the AWS api Lambda behind API
// Gateway (over the runtime and Step Functions). What a route does differs with the backend (a fork
// locally, a redrive on AWS; `wait` only locally); matching, methods, body validation and the error
// shape do not, so they live here and each backend implements the operations.
import { idempotencyKeyError } from '@stepforge/contract';
import { API_BODIES, parseApiBody, type ApiBodySchema } from './apiBodies.js';

/** An HTTP request reduced to what the routes read. */
export interface ServeRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string | undefined>>;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The body as text (base64 already decoded). */
  readonly body?: string | null;
}

/** The response: status, JSON body. */
export interface ServeResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

type Body<K extends keyof typeof API_BODIES> = (typeof API_BODIES)[K] extends ApiBodySchema<infer T> ? T : never;

/** What each route does, per backend. Path parameters arrive decoded. */
export interface ServeBackend {
  /** `GET /openapi.json`, where the backend serves the document itself. */
  openApi?(): Promise<ServeResponse>;
  listWorkflows(): Promise<ServeResponse>;
  startRun(workflow: string, body: Body<'StartRunBody'>, idempotencyKey: string | undefined): Promise<ServeResponse>;
  listRuns(workflow: string, status: string | undefined): Promise<ServeResponse>;
  getRun(runId: string): Promise<ServeResponse>;
  retry(runId: string, body: Body<'RetryBody'>): Promise<ServeResponse>;
  restart(runId: string, body: Body<'RestartBody'>): Promise<ServeResponse>;
  cancel(runId: string, body: Body<'CancelBody'>): Promise<ServeResponse>;
  listApprovals(status: string | undefined): Promise<ServeResponse>;
  decide(approvalId: string, body: Body<'DecisionBody'>): Promise<ServeResponse>;
  /** The answer for an error a route threw that is not an ApiError. */
  errorResponse(e: unknown): ServeResponse;
}

/** An error the API answers with: `{"error":{"code","message"}}` and the status. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(readonly statusCode: number, readonly code: string, message: string, readonly details?: unknown) {
    super(message);
  }
}

/** A JSON response. */
export function apiJson(statusCode: number, body: unknown): ServeResponse {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** `{"error":{"code","message"}}` (with `details` when given). */
export function apiError(statusCode: number, code: string, message: string, details?: unknown): ServeResponse {
  return apiJson(statusCode, { error: { code, message, ...(details !== undefined ? { details } : {}) } });
}

/** The request's body, validated (ApiError `invalid_json` / `invalid_request`, 400). */
function bodyOf<T>(schema: ApiBodySchema<T>, req: ServeRequest): T {
  const r = parseApiBody(schema, req.body);
  if (!r.ok) throw new ApiError(400, r.error.code, r.error.message, r.error.issues);
  return r.value;
}

interface Route {
  readonly method: 'GET' | 'POST';
  readonly pattern: RegExp;
  /** Whether this backend serves the route (absent: every backend does); a route it does not serve is no route at all. */
  readonly served?: (b: ServeBackend) => boolean;
  readonly handle: (b: ServeBackend, req: ServeRequest, params: string[]) => Promise<ServeResponse>;
}

const { StartRunBody, RestartBody, RetryBody, CancelBody, DecisionBody } = API_BODIES;

const ROUTES: readonly Route[] = [
  { method: 'GET', pattern: /^\/openapi\.json$/, served: (b) => b.openApi !== undefined, handle: (b) => b.openApi!() },
  { method: 'GET', pattern: /^\/workflows$/, handle: (b) => b.listWorkflows() },
  {
    method: 'POST', pattern: /^\/workflows\/([^/]+)\/runs$/,
    handle: (b, req, [name]) => {
      const body = bodyOf(StartRunBody, req);
      return b.startRun(name!, body, idempotencyKeyOf(req, body.idempotencyKey));
    },
  },
  { method: 'GET', pattern: /^\/workflows\/([^/]+)\/runs$/, handle: (b, req, [name]) => b.listRuns(name!, statusQuery(req, RUN_STATUSES)) },
  { method: 'GET', pattern: /^\/runs\/([^/]+)$/, handle: (b, _req, [id]) => b.getRun(id!) },
  { method: 'POST', pattern: /^\/runs\/([^/]+)\/retry$/, handle: (b, req, [id]) => b.retry(id!, bodyOf(RetryBody, req)) },
  { method: 'POST', pattern: /^\/runs\/([^/]+)\/restart$/, handle: (b, req, [id]) => b.restart(id!, bodyOf(RestartBody, req)) },
  { method: 'POST', pattern: /^\/runs\/([^/]+)\/cancel$/, handle: (b, req, [id]) => b.cancel(id!, bodyOf(CancelBody, req)) },
  { method: 'GET', pattern: /^\/approvals$/, handle: (b, req) => b.listApprovals(statusQuery(req, APPROVAL_STATUSES)) },
  { method: 'POST', pattern: /^\/approvals\/([^/]+)$/, handle: (b, req, [id]) => b.decide(id!, bodyOf(DecisionBody, req)) },
];

/**
 * The run's idempotency key: the `Idempotency-Key` header or the body's `idempotencyKey`. Both is
 * fine when they are equal; two different keys are 400 `invalid_request` rather than one of them
 * picked (either pick would return or start another run than the other key names).
 */
function idempotencyKeyOf(req: ServeRequest, bodyKey: string | undefined): string | undefined {
  const header = req.headers['idempotency-key'];
  if (header === undefined) return bodyKey;
  const headerError = idempotencyKeyError(header);
  if (headerError !== undefined) throw new ApiError(400, 'invalid_request', `Idempotency-Key header: ${headerError}`);
  if (bodyKey !== undefined && bodyKey !== header) {
    throw new ApiError(400, 'invalid_request', `the Idempotency-Key header ('${header}') and the body's idempotencyKey ('${bodyKey}') disagree: send the key once, in either place`);
  }
  return header;
}

const RUN_STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'] as const;
const APPROVAL_STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'TIMED_OUT'] as const;

/**
 * The `?status=` filter, upper-cased, or undefined when absent. A status no record can have is
 * 400 `invalid_request`: answering an empty list would read as "none in that state".
 */
function statusQuery(req: ServeRequest, allowed: readonly string[]): string | undefined {
  const status = req.query['status'];
  if (status === undefined || status === '') return undefined;
  const upper = status.toUpperCase();
  if (!allowed.includes(upper)) throw new ApiError(400, 'invalid_request', `status must be one of ${allowed.join(', ')}, got '${status}'`);
  return upper;
}

function decodePathParameter(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new ApiError(400, 'invalid_request', `the path segment '${text}' is not valid percent-encoding`);
  }
}

/**
 * Routes one request to the backend. Every error answers `{"error":{"code","message"}}`: 404
 * `not_found` for an unknown path, 405 `method_not_allowed` for a known path and another method
 * (with the `Allow` header RFC 9110 asks for: the methods the path takes), 400 `invalid_json` /
 * `invalid_request` for a refused body (validated strictly, so a misspelt field is refused, not
 * ignored), an ApiError as it says, anything else as the backend maps it. HEAD is answered as GET,
 * without the body.
 */
export async function routeServeRequest(backend: ServeBackend, req: ServeRequest): Promise<ServeResponse> {
  const method = req.method.toUpperCase();
  if (method === 'HEAD') {
    // The headers GET would send (the length of the body it would send among them), no body.
    const answer = await routeServeRequest(backend, { ...req, method: 'GET' });
    return { ...answer, headers: { ...answer.headers, 'content-length': String(Buffer.byteLength(answer.body)) }, body: '' };
  }
  try {
    const path = req.path.replace(/\/+$/, '') || '/';
    const routes = ROUTES.filter((r) => r.pattern.test(path) && (r.served?.(backend) ?? true));
    const route = routes.find((r) => r.method === method);
    if (route) return await route.handle(backend, req, route.pattern.exec(path)!.slice(1).map(decodePathParameter));
    if (routes.length > 0) {
      const allow = allowedMethods(routes);
      const answer = apiError(405, 'method_not_allowed', `${method} is not allowed on ${path}`);
      return { ...answer, headers: { ...answer.headers, allow } };
    }
    return apiError(404, 'not_found', `no route for ${method} ${path}`);
  } catch (e) {
    if (e !== null && typeof e === 'object' && (e as { name?: unknown }).name === 'ApiError') {
      const a = e as ApiError;
      return apiError(a.statusCode, a.code, a.message, a.details);
    }
    return backend.errorResponse(e);
  }
}

/** The `Allow` header of a path: its routes' methods, and HEAD wherever GET is. */
function allowedMethods(routes: readonly Route[]): string {
  const methods = new Set<string>(routes.map((r) => r.method));
  if (methods.has('GET')) methods.add('HEAD');
  return ['GET', 'HEAD', 'POST'].filter((m) => methods.has(m)).join(', ');
}
