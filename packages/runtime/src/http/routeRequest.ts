// The one router of the Stepforge HTTP API, for both places that serve it: `stepforge serve` (an
// HTTP server on loopback) and the AWS api Lambda behind API Gateway (an adapter from the proxy
// event). The routes, bodies, error shape and statuses are the contract's (API_ROUTES, API_BODIES,
// ErrorBody, HTTP_STATUS_OF); what each operation does is the backend's (runServiceBackend.ts).
import {
  API_BODIES,
  API_ROUTES,
  errorBody,
  httpStatusOf,
  idempotencyKeyError,
  isStepforgeError,
  parseApiBody,
  type ApiBodySchema,
  type ApiOperation,
  type ApiRoute,
} from '@stepforge/contract';

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

/** The response: status, headers, body. */
export interface ServeResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

type Body<K extends keyof typeof API_BODIES> = (typeof API_BODIES)[K] extends ApiBodySchema<infer T> ? T : never;

/** What each route does. Path parameters arrive decoded. */
export interface ServeBackend {
  /** `GET /openapi.json`, where the backend serves the document itself (absent: no such route). */
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
}

/** How a router is extended and observed. */
export interface RouterOptions {
  /**
   * Asked for a request whose path no API route has, before the 404: another handler of the same
   * server (the browser view's pages and static files). Undefined: not its path either.
   */
  readonly fallback?: (req: ServeRequest) => Promise<ServeResponse | undefined>;
  /** Told of an error that is not the client's (answered 500 `internal`): the Lambda logs it. */
  readonly onInternalError?: (e: unknown) => void;
  /** Applied to an internal error's message before it is answered (the runtime's secret redactor). */
  readonly redact?: (text: string) => string;
}

/** An error the router answers with as it says (`{"error":{"code","message"}}`, the status given or the table's). */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly statusCode: number;
  constructor(
    readonly code: string,
    message: string,
    readonly details?: unknown,
    statusCode?: number,
  ) {
    super(message);
    this.statusCode = statusCode ?? httpStatusOf(code);
  }
}

/** A JSON response. */
export function apiJson(statusCode: number, body: unknown): ServeResponse {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** The error body for `code`, with the status the contract's table gives it (or `statusCode`). */
export function apiError(code: string, message: string, details?: unknown, statusCode = httpStatusOf(code)): ServeResponse {
  return apiJson(statusCode, errorBody(code, message, details));
}

/** The request's body, validated (`invalid_json` / `input_too_deep` / `invalid_request`, 400). */
function bodyOf<T>(schema: ApiBodySchema<T>, req: ServeRequest): T {
  const r = parseApiBody(schema, req.body);
  if (!r.ok) throw new ApiError(r.error.code, r.error.message, r.error.issues);
  return r.value;
}

/**
 * The run's idempotency key: the `Idempotency-Key` header or the body's `idempotencyKey`. Both is
 * fine when they are equal; two different keys are 400 `invalid_request` rather than one of them
 * picked (either pick would return or start another run than the other key names).
 */
function idempotencyKeyOf(req: ServeRequest, bodyKey: string | undefined): string | undefined {
  const header = req.headers['idempotency-key'];
  if (header === undefined) return bodyKey;
  const headerError = idempotencyKeyError(header);
  if (headerError !== undefined) throw new ApiError('invalid_request', `Idempotency-Key header: ${headerError}`);
  if (bodyKey !== undefined && bodyKey !== header) {
    throw new ApiError(
      'invalid_request',
      `the Idempotency-Key header ('${header}') and the body's idempotencyKey ('${bodyKey}') disagree: send the key once, in either place`,
    );
  }
  return header;
}

/**
 * The `?status=` filter, upper-cased, or undefined when absent. A status no record can have is
 * 400 `invalid_request`: answering an empty list would read as "none in that state".
 */
function statusQuery(req: ServeRequest, allowed: readonly string[]): string | undefined {
  const status = req.query['status'];
  if (status === undefined || status === '') return undefined;
  const upper = status.toUpperCase();
  if (!allowed.includes(upper)) throw new ApiError('invalid_request', `status must be one of ${allowed.join(', ')}, got '${status}'`);
  return upper;
}

/** What each operation calls on the backend, from the matched route, the request and the path parameters. */
const DISPATCH: Readonly<
  Record<ApiOperation, (b: ServeBackend, req: ServeRequest, p: readonly string[], route: ApiRoute) => Promise<ServeResponse>>
> = {
  openApi: (b) => b.openApi!(),
  listWorkflows: (b) => b.listWorkflows(),
  startRun: (b, req, [name]) => {
    const body = bodyOf(API_BODIES.StartRunBody, req);
    return b.startRun(name!, body, idempotencyKeyOf(req, body.idempotencyKey));
  },
  listRuns: (b, req, [name], route) => b.listRuns(name!, statusQuery(req, route.statusQuery ?? [])),
  getRun: (b, _req, [id]) => b.getRun(id!),
  retry: (b, req, [id]) => b.retry(id!, bodyOf(API_BODIES.RetryBody, req)),
  restart: (b, req, [id]) => b.restart(id!, bodyOf(API_BODIES.RestartBody, req)),
  cancel: (b, req, [id]) => b.cancel(id!, bodyOf(API_BODIES.CancelBody, req)),
  listApprovals: (b, req, _p, route) => b.listApprovals(statusQuery(req, route.statusQuery ?? [])),
  decide: (b, req, [id]) => b.decide(id!, bodyOf(API_BODIES.DecisionBody, req)),
};

/** A route's path as a pattern: each `{param}` one path segment. */
const PATTERNS = new Map(API_ROUTES.map((r) => [r, new RegExp(`^${r.path.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '([^/]+)')}$`)]));

function decodePathParameter(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new ApiError('invalid_request', `the path segment '${text}' is not valid percent-encoding`);
  }
}

/** The answer for an error: its own code and status, a StepforgeError's by the table, anything else 500 `internal`. */
export function errorAnswer(e: unknown, options: RouterOptions = {}): ServeResponse {
  if (e instanceof ApiError) return apiError(e.code, e.message, e.details, e.statusCode);
  if (isStepforgeError(e)) return apiError(e.code, e.message, e.details ?? undefined);
  options.onInternalError?.(e);
  const err = e as { name?: string; message?: string };
  const message = `${err.name ?? 'Error'}: ${err.message ?? String(e)}`;
  return apiError('internal', options.redact ? options.redact(message) : message);
}

/**
 * Routes one request to the backend. Every error answers the contract's ErrorBody: 404
 * `not_found` for an unknown path, 405 `method_not_allowed` for a known path and another method
 * (with the `Allow` header RFC 9110 asks for: the methods the path takes), 400 `invalid_json` /
 * `invalid_request` for a refused body (validated strictly, so a misspelt field is refused, not
 * ignored), a StepforgeError by its code (HTTP_STATUS_OF), anything else 500 `internal`. HEAD is
 * answered as GET, without the body.
 */
export async function routeRequest(backend: ServeBackend, req: ServeRequest, options: RouterOptions = {}): Promise<ServeResponse> {
  const method = req.method.toUpperCase();
  if (method === 'HEAD') {
    // The headers GET would send (the length of the body it would send among them), no body.
    const answer = await routeRequest(backend, { ...req, method: 'GET' }, options);
    return { ...answer, headers: { ...answer.headers, 'content-length': String(Buffer.byteLength(answer.body)) }, body: '' };
  }
  try {
    const path = req.path.replace(/\/+$/, '') || '/';
    const routes = API_ROUTES.filter((r) => PATTERNS.get(r)!.test(path) && (r.operation !== 'openApi' || backend.openApi !== undefined));
    const route = routes.find((r) => r.method === method);
    if (route)
      return await DISPATCH[route.operation](backend, req, PATTERNS.get(route)!.exec(path)!.slice(1).map(decodePathParameter), route);
    if (routes.length > 0) {
      const answer = apiError('method_not_allowed', `${method} is not allowed on ${path}`);
      return { ...answer, headers: { ...answer.headers, allow: allowedMethods(routes) } };
    }
    const other = await options.fallback?.(req);
    if (other !== undefined) return other;
    return apiError('not_found', `no route for ${method} ${path}`);
  } catch (e) {
    return errorAnswer(e, options);
  }
}

/** The `Allow` header of a path: its routes' methods, and HEAD wherever GET is. */
function allowedMethods(routes: readonly ApiRoute[]): string {
  const methods = new Set<string>(routes.map((r) => r.method));
  if (methods.has('GET')) methods.add('HEAD');
  return ['GET', 'HEAD', 'POST'].filter((m) => methods.has(m)).join(', ');
}
