import type { MessagePort } from 'node:worker_threads';
import { buildQueryString, type AbortSignalLike, type SdkHttpRequest, type SdkHttpResponse } from './LoopbackHttpHandler.js';

/** A request as it crosses the port (dynaliteWorker.cjs reads it). */
interface PortRequest {
  readonly id: number;
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string | Uint8Array | undefined;
}

/** An operation as it crosses the port without an HTTP request around it (see `call`). */
interface PortCall {
  readonly id: number;
  readonly target: string;
  readonly body: string;
}

/** An answer as it comes back over the port. */
export interface PortAnswer {
  readonly id: number;
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** A request waiting for its answer. */
interface Pending {
  resolve(r: PortAnswer): void;
  reject(e: Error): void;
}

/**
 * An SDK request handler (the client option `requestHandler`) that hands each request to the
 * dynalite worker thread over a MessagePort instead of over loopback HTTP: the DynamoDB clients of
 * the process that owns the embedded stack, which started that worker and holds the port's other
 * end. The SDK still builds, signs and parses every request, and dynalite still answers it with its
 * own request handler, so what a step sends and what it gets back are the same; what goes is the
 * HTTP/1.1 framing and parsing on both threads, the socket writes and the loopback guard's second
 * signature check (the port cannot be reached by anyone but this thread). Other processes of the
 * project reach the same dynalite over HTTP, as before.
 *
 * The port holds the process open only while a request waits for its answer. If the worker ends
 * (the stack closing, or dynalite failing), the waiting requests fail with ECONNRESET, as a
 * connection closed under them would, rather than wait for ever.
 */
export class WorkerPortHttpHandler {
  readonly metadata = { handlerProtocol: 'http/1.1' };
  readonly #port: MessagePort;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #closed = false;

  constructor(port: MessagePort) {
    this.#port = port;
    port.on('message', (m: PortAnswer) => {
      const waiting = this.#pending.get(m.id);
      if (!waiting) return;
      this.#forget(m.id);
      waiting.resolve(m);
    });
    port.on('close', () => {
      this.#closed = true;
      for (const [id, waiting] of this.#pending) {
        this.#forget(id);
        waiting.reject(Object.assign(new Error('the DynamoDB worker closed its port under a request'), { code: 'ECONNRESET' }));
      }
    });
    port.unref();
  }

  handle(
    request: SdkHttpRequest,
    options: { abortSignal?: AbortSignalLike; requestTimeout?: number } = {},
  ): Promise<{ response: SdkHttpResponse }> {
    const body = request.body;
    if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array)) {
      return Promise.reject(new Error('WorkerPortHttpHandler sends text or byte bodies only, not a stream'));
    }
    const query = request.query ? buildQueryString(request.query) : '';
    return this.#post(
      (id) => ({
        id,
        method: request.method,
        url: query ? `${request.path}?${query}` : request.path,
        headers: request.headers,
        body: body ?? undefined,
      }),
      options,
    ).then((m) => ({ response: { statusCode: m.statusCode, headers: m.headers, body: Buffer.from(m.body) } }));
  }

  /**
   * One DynamoDB operation by its target (`DynamoDB_20120810.PutItem`) and JSON body, answered by
   * dynalite's request handler as an HTTP request would be, but built by no SDK: what
   * `withPortCommands` sends. Resolves with dynalite's status and body, an error answer included.
   */
  call(target: string, body: string): Promise<PortAnswer> {
    return this.#post((id) => ({ id, target, body }), {});
  }

  #post(
    message: (id: number) => PortRequest | PortCall,
    options: { abortSignal?: AbortSignalLike; requestTimeout?: number },
  ): Promise<PortAnswer> {
    if (this.#closed) return Promise.reject(Object.assign(new Error('the DynamoDB worker port is closed'), { code: 'ECONNRESET' }));
    const { abortSignal } = options;
    if (abortSignal?.aborted) return Promise.reject(abortError());
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      const settle = () => {
        if (timer) clearTimeout(timer);
        if (onAbort) abortSignal?.removeEventListener?.('abort', onAbort);
      };
      // An answer that comes after a timeout or an abort finds nothing waiting and is dropped, as
      // HTTP drops the connection's late answer.
      const stop = (e: Error) => {
        if (!this.#pending.has(id)) return;
        this.#forget(id);
        settle();
        reject(e);
      };
      this.#pending.set(id, {
        resolve: (r) => {
          settle();
          resolve(r);
        },
        reject: (e) => {
          settle();
          reject(e);
        },
      });
      if (this.#pending.size === 1) this.#port.ref();
      this.#port.postMessage(message(id));
      const timeout = options.requestTimeout;
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

  #forget(id: number): void {
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#port.unref();
  }

  updateHttpClientConfig(): void {
    // Nothing is configurable after construction.
  }

  httpHandlerConfigs(): Record<string, never> {
    return {};
  }

  destroy(): void {
    this.#closed = true;
    this.#port.close();
  }
}

function abortError(): Error {
  return Object.assign(new Error('Request aborted'), { name: 'AbortError' });
}
