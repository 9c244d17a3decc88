import type { Readable } from 'node:stream';
import type { Dispatcher, Pool as UndiciPool } from 'undici';

/**
 * undici's Pool: the pool alone, not undici's index (see undiciPool.d.ts), loaded when a first
 * request is sent. A `run` that owns its stack sends its DynamoDB requests over the worker's port
 * and calls its engine in process, so it may send none; undici is ~10 ms of its start-up to load.
 */
let Pool: typeof UndiciPool | undefined;
let loadingPool: Promise<unknown> | undefined;
const loadPool = () => (loadingPool ??= import('undici/lib/dispatcher/pool.js').then((m) => (Pool = m.default)));

/** The parts of the SDK's HttpRequest this handler reads (the SDK passes a full one). */
export interface SdkHttpRequest {
  readonly protocol: string;
  readonly hostname: string;
  readonly port?: number;
  readonly method: string;
  readonly path: string;
  readonly query?: Record<string, string | string[] | null>;
  readonly headers: Record<string, string>;
  readonly body?: unknown;
  readonly fragment?: string;
}

/** The SDK's HttpResponse, with the body already read. */
export interface SdkHttpResponse {
  readonly statusCode: number;
  readonly reason?: string;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array;
}

/** Request headers the handler does not send (see the class comment). */
const DROPPED_HEADERS = new Set(['expect']);

/**
 * An SDK request handler (the client option `requestHandler`) for the embedded stack's loopback
 * emulators and engine: plain HTTP/1.1 over keep-alive connections, as the SDK's NodeHttpHandler
 * sends it, so the requests on the wire are the same (the SDK still builds, signs with SigV4 and
 * parses every one). It sends them with undici's dispatcher (a connection pool per origin and a
 * callback per response part) rather than `node:http`'s request and response streams, which cost
 * a loopback request about as much as the emulator's own work on it; and it leaves out what a
 * loopback peer cannot need and every request paid for: timers per request (socket acquisition,
 * connection, keep-alive probes), TLS, `Expect: 100-continue` (the header is not sent), and a
 * response stream the SDK drains again: it reads the (small, JSON) response body itself and hands
 * it over as bytes. `requestTimeout` and `abortSignal` are honoured. Plain `http:` only.
 */
export class LoopbackHttpHandler {
  readonly metadata = { handlerProtocol: 'http/1.1' };
  readonly #pools = new Map<string, UndiciPool>();
  readonly #connections: number;
  readonly #requestTimeoutMs: number | undefined;

  constructor(options: { readonly maxSockets?: number; readonly requestTimeoutMs?: number } = {}) {
    this.#connections = options.maxSockets ?? 50;
    this.#requestTimeoutMs = options.requestTimeoutMs;
  }

  handle(
    request: SdkHttpRequest,
    options: { abortSignal?: AbortSignalLike; requestTimeout?: number } = {},
  ): Promise<{ response: SdkHttpResponse }> {
    if (request.protocol !== 'http:')
      return Promise.reject(new Error(`LoopbackHttpHandler speaks plain http only, not ${request.protocol}`));
    if (Pool === undefined) return loadPool().then(() => this.handle(request, options));
    const { abortSignal } = options;
    if (abortSignal?.aborted) return Promise.reject(abortError());
    let path = request.path;
    const query = request.query ? buildQueryString(request.query) : '';
    if (query) path += `?${query}`;
    if (request.fragment) path += `#${request.fragment}`;
    let headers: Record<string, string> = request.headers;
    for (const name in headers) {
      if (DROPPED_HEADERS.has(name.toLowerCase())) {
        headers = Object.fromEntries(Object.entries(headers).filter(([n]) => !DROPPED_HEADERS.has(n.toLowerCase())));
        break;
      }
    }
    const pool = this.#pool(`http://${request.hostname}${request.port !== undefined ? `:${request.port}` : ''}`);
    const timeout = options.requestTimeout ?? this.#requestTimeoutMs;
    return new Promise((resolve, reject) => {
      let controller: Dispatcher.DispatchController | undefined;
      // Why the request ended early, if it did: set before aborting, so the error says so.
      let stopped: Error | undefined;
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      const stop = (e: Error) => {
        stopped ??= e;
        controller?.abort(stopped);
      };
      const settle = () => {
        if (timer) clearTimeout(timer);
        if (onAbort) abortSignal?.removeEventListener?.('abort', onAbort);
      };
      let statusCode = -1;
      let reason: string | undefined;
      let responseHeaders: Record<string, string> = {};
      const chunks: Buffer[] = [];
      pool.dispatch(
        { path, method: request.method, headers, body: bodyOf(request.body) },
        {
          onRequestStart(c) {
            controller = c;
            if (stopped) c.abort(stopped);
          },
          onResponseStart(_c, status, h, statusMessage) {
            statusCode = status;
            reason = statusMessage || undefined;
            responseHeaders = {};
            for (const name in h) {
              const v = h[name];
              if (v !== undefined) responseHeaders[name] = Array.isArray(v) ? v.join(', ') : v;
            }
          },
          onResponseData(_c, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            settle();
            const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
            resolve({ response: { statusCode, ...(reason ? { reason } : {}), headers: responseHeaders, body } });
          },
          onResponseError(_c, e) {
            settle();
            reject(stopped ?? transportError(e));
          },
        },
      );
      if (timeout !== undefined && timeout > 0) {
        timer = setTimeout(
          () => stop(Object.assign(new Error(`no response within ${timeout} ms`), { name: 'TimeoutError', code: 'ETIMEDOUT' })),
          timeout,
        );
      }
      if (abortSignal) {
        onAbort = () => stop(abortError());
        if (typeof abortSignal.addEventListener === 'function') abortSignal.addEventListener('abort', onAbort, { once: true });
        else (abortSignal as { onabort: unknown }).onabort = onAbort;
      }
    });
  }

  /** The keep-alive connections to one origin. */
  #pool(origin: string): UndiciPool {
    let pool = this.#pools.get(origin);
    if (!pool) {
      pool = new Pool!(origin, { connections: this.#connections });
      this.#pools.set(origin, pool);
    }
    return pool;
  }

  updateHttpClientConfig(): void {
    // Nothing is configurable after construction.
  }

  httpHandlerConfigs(): Record<string, never> {
    return {};
  }

  destroy(): void {
    for (const pool of this.#pools.values()) void pool.destroy().catch(() => undefined);
    this.#pools.clear();
  }
}

/** What the SDK hands over as `abortSignal` (a DOM AbortSignal or its own AbortSignal). */
export interface AbortSignalLike {
  readonly aborted: boolean;
  addEventListener?(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener?(type: 'abort', listener: () => void): void;
  onabort?: unknown;
}

function abortError(): Error {
  return Object.assign(new Error('Request aborted'), { name: 'AbortError' });
}

/** A request body as undici takes it: text, bytes or a stream. */
function bodyOf(body: unknown): string | Uint8Array | Readable | null {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (typeof (body as Readable).pipe === 'function') return body as Readable;
  return Buffer.from(body as ArrayBuffer);
}

/**
 * A connection that the server closed under a request surfaces from undici as `UND_ERR_SOCKET`;
 * it is what `node:http` reports as ECONNRESET, the code the SDK's retry strategy treats as
 * transient, so it carries that code (undici's error is the cause). Other errors (ECONNREFUSED, …)
 * pass on as they are.
 */
function transportError(e: Error): Error {
  if ((e as { code?: string }).code !== 'UND_ERR_SOCKET') return e;
  return Object.assign(new Error(`connection closed by the server: ${e.message}`, { cause: e }), { code: 'ECONNRESET' });
}

/** The query string as the SDK builds it (keys sorted, RFC 3986 escaping, repeated keys for lists). */
export function buildQueryString(query: Record<string, string | string[] | null>): string {
  const parts: string[] = [];
  for (const k of Object.keys(query).sort()) {
    const value = query[k];
    const key = escapeUri(k);
    if (Array.isArray(value)) {
      for (const v of value) parts.push(`${key}=${escapeUri(v)}`);
    } else {
      parts.push(value || typeof value === 'string' ? `${key}=${escapeUri(value)}` : key);
    }
  }
  return parts.join('&');
}

function escapeUri(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
