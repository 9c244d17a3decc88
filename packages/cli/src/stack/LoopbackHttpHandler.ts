import { Agent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';

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

/**
 * An SDK request handler (the client option `requestHandler`) for the embedded stack's loopback
 * emulators and engine: plain HTTP/1.1 over keep-alive sockets, as the SDK's NodeHttpHandler
 * sends it, so the requests on the wire are the same (the SDK still builds, signs with SigV4 and
 * parses every one). What it leaves out is what a loopback peer cannot need and every request
 * paid for: four timers a request (socket-acquisition warning, connection, request, keep-alive
 * probes), TLS and `Expect: 100-continue` handling, and a response stream the SDK drains again;
 * it reads the (small, JSON) response body itself and hands it over as bytes.
 * `requestTimeout` and `abortSignal` are honoured. Plain `http:` only.
 */
export class LoopbackHttpHandler {
  readonly metadata = { handlerProtocol: 'http/1.1' };
  readonly #agent: Agent;
  readonly #requestTimeoutMs: number | undefined;

  constructor(options: { readonly maxSockets?: number; readonly requestTimeoutMs?: number } = {}) {
    this.#agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 50 });
    this.#requestTimeoutMs = options.requestTimeoutMs;
  }

  handle(request: SdkHttpRequest, options: { abortSignal?: AbortSignalLike; requestTimeout?: number } = {}): Promise<{ response: SdkHttpResponse }> {
    if (request.protocol !== 'http:') return Promise.reject(new Error(`LoopbackHttpHandler speaks plain http only, not ${request.protocol}`));
    const { abortSignal } = options;
    if (abortSignal?.aborted) return Promise.reject(abortError());
    return new Promise((resolve, reject) => {
      let path = request.path;
      const query = request.query ? buildQueryString(request.query) : '';
      if (query) path += `?${query}`;
      if (request.fragment) path += `#${request.fragment}`;
      let onAbort: (() => void) | undefined;
      const settle = () => {
        if (onAbort) abortSignal?.removeEventListener?.('abort', onAbort);
      };
      const fail = (e: Error) => {
        settle();
        reject(e);
      };
      const req = httpRequest({
        host: request.hostname, port: request.port, method: request.method, path,
        headers: request.headers as OutgoingHttpHeaders, agent: this.#agent,
      }, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('error', fail);
        res.once('end', () => {
          settle();
          const headers: Record<string, string> = {};
          for (const name in res.headers) {
            const v = res.headers[name];
            if (v !== undefined) headers[name] = Array.isArray(v) ? v.join(',') : v;
          }
          const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
          resolve({ response: { statusCode: res.statusCode ?? -1, ...(res.statusMessage ? { reason: res.statusMessage } : {}), headers, body } });
        });
      });
      // A timeout or an abort destroys the request with its own error, which arrives here.
      req.once('error', fail);
      const timeout = options.requestTimeout ?? this.#requestTimeoutMs;
      if (timeout !== undefined && timeout > 0) {
        req.setTimeout(timeout, () => {
          req.destroy(Object.assign(new Error(`no response within ${timeout} ms`), { name: 'TimeoutError', code: 'ETIMEDOUT' }));
        });
      }
      if (abortSignal) {
        onAbort = () => req.destroy(abortError());
        if (typeof abortSignal.addEventListener === 'function') abortSignal.addEventListener('abort', onAbort, { once: true });
        else (abortSignal as { onabort: unknown }).onabort = onAbort;
      }
      const body = request.body;
      if (body === undefined || body === null) req.end();
      else if (typeof body === 'string' || body instanceof Uint8Array) req.end(body);
      else if (typeof (body as NodeJS.ReadableStream).pipe === 'function') (body as NodeJS.ReadableStream).pipe(req);
      else req.end(Buffer.from(body as ArrayBuffer));
    });
  }

  updateHttpClientConfig(): void {
    // Nothing is configurable after construction.
  }

  httpHandlerConfigs(): Record<string, never> {
    return {};
  }

  destroy(): void {
    this.#agent.destroy();
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
