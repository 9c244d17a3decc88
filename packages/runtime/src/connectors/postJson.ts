import { isRuntimeError, RuntimeError } from '../errors/RuntimeError.js';
import { outboundRequest, type OutboundPolicy } from '../net/outboundRequest.js';
import { markOutcomeUnknown } from '../runtime/runIdempotent.js';

/** The most of an answer a connector reads: past it the read stops and the call fails (OutputTooLarge). */
export const CONNECTOR_MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * Sends one HTTP request for a connector, under the outbound policy (the host allow-list, no
 * metadata or link-local address, private ones only when allowed, checked on the address it
 * connects to; see outboundRequest). A refusal happens before anything is sent. A network failure
 * after sending is an unknown outcome (the target may have acted); an HTTP error answer is a
 * definite ConnectorError; redirects are not followed.
 */
export async function sendHttp(
  what: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number; maxBodyBytes?: number },
  policy: Omit<OutboundPolicy, 'what'>,
): Promise<{ status: number; body: unknown; headers: Record<string, string> }> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new RuntimeError('InvalidInput', `${what}: invalid URL "${url}"`);
  }
  let res;
  try {
    res = await outboundRequest(
      target,
      {
        method: init.method ?? 'POST',
        ...(init.headers ? { headers: init.headers } : {}),
        ...(init.body !== undefined ? { body: init.body } : {}),
        timeoutMs: init.timeoutMs ?? 30_000,
        maxBodyBytes: init.maxBodyBytes ?? CONNECTOR_MAX_RESPONSE_BYTES,
      },
      { ...policy, what },
    );
  } catch (e) {
    if (isRuntimeError(e)) throw e;
    throw markOutcomeUnknown(
      new RuntimeError('ConnectorError', `${what}: request to ${target.host} failed: ${(e as Error).message}`, {
        retryable: true,
        cause: e,
      }),
    );
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  const text = res.body.toString('utf8');
  let body: unknown = text;
  if ((headers['content-type'] ?? '').includes('json')) {
    try {
      body = JSON.parse(text);
    } catch {
      /* keep the text */
    }
  }
  if (res.status < 200 || res.status >= 300) {
    throw new RuntimeError('ConnectorError', `${what}: ${target.host} answered HTTP ${res.status}`, {
      retryable: res.status >= 500 || res.status === 429,
      details: { status: res.status },
    });
  }
  return { status: res.status, body, headers };
}
