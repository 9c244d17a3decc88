// API Gateway entry point of the HTTP API: an adapter from the REST proxy event to the one router
// (http/routeRequest.ts) over the one run service, as `stepforge serve` serves it.
import { routeRequest, type ServeResponse } from '../http/routeRequest.js';
import { runServiceBackend } from '../http/runServiceBackend.js';
import { deployedRunService } from '../runs/deployedRunService.js';
import type { Runtime } from '../runtime/Runtime.js';
import { lazyHandler } from './lazyHandler.js';
// Deciding an approval runs the call it gated (see steps/approvalAnswerer.ts).
import '../steps/toolStep.js';

/** The fields of an API Gateway REST proxy event (v1) the adapter reads. */
export interface ApiEvent {
  readonly httpMethod?: string;
  readonly path?: string;
  readonly queryStringParameters?: Record<string, string | undefined> | null;
  readonly headers?: Record<string, string | undefined> | null;
  readonly body?: string | null;
  readonly isBase64Encoded?: boolean;
}

/** An API Gateway proxy response. */
export type ApiResponse = ServeResponse;

/**
 * API Gateway's integration timeout is 29 s: a `wait: true` request still waiting after this is
 * answered as one without `wait` (202, RUNNING), and the client polls GET /runs/{id}.
 */
const WAIT_LIMIT_MS = 25_000;

/** Routes one API Gateway request. */
export async function handleApiEvent(rt: Runtime, event: ApiEvent): Promise<ApiResponse> {
  const headers: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(event.headers ?? {})) headers[k.toLowerCase()] = v;
  const body = event.body && event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  const backend = runServiceBackend(deployedRunService(rt), { waitLimitMs: WAIT_LIMIT_MS });
  return routeRequest(
    backend,
    {
      method: event.httpMethod ?? 'GET',
      path: event.path ?? '/',
      query: event.queryStringParameters ?? {},
      headers,
      ...(body !== undefined ? { body } : {}),
    },
    {
      onInternalError: (e) =>
        rt.logger.error('api request failed', {
          errorName: (e as Error).name,
          errorMessage: rt.redactor.redactText((e as Error).message ?? String(e)),
        }),
      redact: (text) => rt.redactor.redactText(text),
    },
  );
}

/**
 * Lambda entry point (API Gateway REST proxy integration), wrapped as every handler is: traced SDK
 * clients, the Lambda context on every log line, the invocation's metrics published.
 */
export const handler = lazyHandler((rt) => (event) => handleApiEvent(rt, event as ApiEvent)) as (
  event: ApiEvent,
  context?: unknown,
) => Promise<ApiResponse>;
