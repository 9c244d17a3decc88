import { RuntimeError } from '../errors/RuntimeError.js';
import { markOutcomeUnknown } from '../runtime/runIdempotent.js';

/**
 * Sends one HTTP request for a connector. A network failure after sending is an unknown outcome
 * (the target may have acted); an HTTP error answer is a definite ConnectorError.
 */
export async function sendHttp(
  what: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number },
): Promise<{ status: number; body: unknown; headers: Record<string, string> }> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? 'POST',
      headers: init.headers,
      body: init.body,
      signal: AbortSignal.timeout(init.timeoutMs ?? 30_000),
    });
  } catch (e) {
    throw markOutcomeUnknown(new RuntimeError('ConnectorError', `${what}: request to ${new URL(url).host} failed: ${(e as Error).message}`, { retryable: true, cause: e }));
  }
  const text = await res.text();
  let body: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json')) {
    try { body = JSON.parse(text); } catch { /* keep the text */ }
  }
  if (!res.ok) {
    throw new RuntimeError('ConnectorError', `${what}: ${new URL(url).host} answered HTTP ${res.status}`, {
      retryable: res.status >= 500 || res.status === 429, details: { status: res.status },
    });
  }
  return { status: res.status, body, headers: Object.fromEntries(res.headers.entries()) };
}
