// The page's one way to the server: same origin, the API's bearer token (kept for this tab only).
const KEY = 'stepforge.apiToken';

/** An answer the API refused, by its code. */
export class ApiFailure extends Error {
  override readonly name = 'ApiFailure';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function token(): string | null {
  return sessionStorage.getItem(KEY);
}
export function setToken(t: string): void {
  sessionStorage.setItem(KEY, t);
}
export function clearToken(): void {
  sessionStorage.removeItem(KEY);
}

/** Trades a one-time sign-in code (from `runs show --open`) for the token. */
export async function redeemCode(code: string): Promise<void> {
  const r = await fetch('/view/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  const body = (await r.json()) as { token?: string; error?: { code: string; message: string } };
  if (!r.ok || !body.token) throw new ApiFailure(r.status, body.error?.code ?? 'invalid_code', body.error?.message ?? 'sign-in failed');
  setToken(body.token);
}

/** A JSON request with the token; a refusal throws ApiFailure with the API's code and message. */
export async function api<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const r = await fetch(path, {
    method,
    headers: { authorization: `Bearer ${token() ?? ''}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const json = (await r.json().catch(() => ({}))) as { error?: { code: string; message: string } };
  if (!r.ok) throw new ApiFailure(r.status, json.error?.code ?? 'internal', json.error?.message ?? `HTTP ${r.status}`);
  return json as T;
}

/**
 * Server-sent events from `path`, read through fetch (EventSource cannot send the token); calls
 * `onChange` per `change` event until the returned function is called. Reconnects after a drop.
 */
export function subscribe(path: string, onChange: () => void, onState: (live: boolean) => void): () => void {
  const abort = new AbortController();
  let stopped = false;
  const loop = async (): Promise<void> => {
    while (!stopped) {
      try {
        const r = await fetch(path, {
          headers: { authorization: `Bearer ${token() ?? ''}`, accept: 'text/event-stream' },
          signal: abort.signal,
        });
        if (!r.ok || !r.body) throw new Error(`HTTP ${r.status}`);
        onState(true);
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let at: number;
          while ((at = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, at);
            buf = buf.slice(at + 2);
            if (/^event: change$/m.test(block)) onChange();
          }
        }
      } catch {
        if (stopped) return;
      }
      onState(false);
      if (!stopped) await new Promise((res) => setTimeout(res, 1000));
    }
  };
  void loop();
  return () => {
    stopped = true;
    abort.abort();
  };
}
