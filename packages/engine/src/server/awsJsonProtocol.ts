import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isSfnApiError } from '../executions/SfnApiError.js';
import { toWire } from './wireDates.js';

/** One API operation: the JSON request in, the JSON response out (dates as epoch milliseconds). */
export type Operation = (request: Record<string, unknown>) => Record<string, unknown> | Promise<Record<string, unknown>>;

const TARGET_PREFIX = 'AWSStepFunctions.';
const MAX_BODY = 2 * 1024 * 1024;

/**
 * Serves the AWS JSON 1.0 protocol: `POST /` with `X-Amz-Target: AWSStepFunctions.<Op>` and an
 * `application/x-amz-json-1.0` body. Errors go back as HTTP 400 with `{"__type", "message"}` and
 * an `x-amzn-ErrorType` header, which is how the AWS SDKs recognise the error class.
 */
export function createProtocolHandler(operations: Readonly<Record<string, Operation>>, unsupported: Readonly<Record<string, string>> = {}) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const requestId = randomUUID();
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      void (async () => {
        try {
          if (req.method !== 'POST') throw apiError('UnknownOperationException', `Only POST is supported (got ${req.method ?? '?'})`, 404);
          const target = String(req.headers['x-amz-target'] ?? '');
          if (!target.startsWith(TARGET_PREFIX))
            throw apiError('UnknownOperationException', `Missing or unknown X-Amz-Target header: '${target}'`);
          const name = target.slice(TARGET_PREFIX.length);
          const op = Object.prototype.hasOwnProperty.call(operations, name) ? operations[name] : undefined;
          if (!op) {
            const why = Object.prototype.hasOwnProperty.call(unsupported, name) ? `: ${unsupported[name]}` : '';
            throw apiError('UnknownOperationException', `Operation '${name}' is not supported by the embedded engine${why}`);
          }
          if (size > MAX_BODY) throw apiError('ValidationException', `Request body is larger than ${MAX_BODY} bytes`);
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = {};
          if (text.trim() !== '') {
            try {
              body = JSON.parse(text);
            } catch {
              throw apiError('SerializationException', 'The request body is not valid JSON');
            }
          }
          if (body === null || typeof body !== 'object' || Array.isArray(body))
            throw apiError('SerializationException', 'The request body must be a JSON object');
          const result = await op(body as Record<string, unknown>);
          send(res, 200, toWire(result), requestId);
        } catch (e) {
          if (isSfnApiError(e)) {
            send(res, e.status, { __type: e.type, message: e.message }, requestId, e.type);
          } else {
            const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
            send(res, 500, { __type: 'InternalFailure', message }, requestId, 'InternalFailure');
          }
        }
      })();
    });
  };
}

function apiError(type: string, message: string, status = 400): Error {
  return Object.assign(new Error(message), { name: 'SfnApiError', type, status });
}

function send(res: ServerResponse, status: number, body: unknown, requestId: string, errorType?: string): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/x-amz-json-1.0',
    'Content-Length': Buffer.byteLength(text),
    'x-amzn-RequestId': requestId,
    ...(errorType !== undefined ? { 'x-amzn-ErrorType': errorType } : {}),
  });
  res.end(text);
}
