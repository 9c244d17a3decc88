import { RuntimeError } from '../errors/RuntimeError.js';
import { markOutcomeUnknown } from '../runtime/runIdempotent.js';
import type { ToolDefinition } from './ToolDefinition.js';

/** Policy of `http_fetch`: which hosts, how much body. */
export interface HttpFetchPolicy {
  /** Exact host names (`api.example.com`, `127.0.0.1:8080`) or `*.example.com` suffixes. */
  readonly allowHosts: readonly string[];
  readonly maxBodyBytes?: number;
  readonly timeoutMs?: number;
}

/** True when `url`'s host (with or without port) is allow-listed. */
export function hostAllowed(url: URL, allow: readonly string[]): boolean {
  const host = url.hostname.toLowerCase();
  const hostPort = url.host.toLowerCase();
  return allow.some((a) => {
    const p = a.toLowerCase();
    if (p.startsWith('*.')) return host.endsWith(p.slice(1));
    return p === host || p === hostPort;
  });
}

function parseUrl(raw: unknown): URL {
  if (typeof raw !== 'string') throw new RuntimeError('InvalidInput', 'url must be a string');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RuntimeError('InvalidInput', `invalid URL "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RuntimeError('PolicyDenied', `only http and https URLs are allowed, got ${url.protocol}`, { details: { url: raw } });
  }
  if (url.username || url.password) throw new RuntimeError('PolicyDenied', 'URLs with credentials are refused', { details: { url: url.host } });
  return url;
}

async function readCapped(res: Response, max: number): Promise<{ text: string; truncated: boolean }> {
  const buf = Buffer.from(await res.arrayBuffer());
  return { text: buf.subarray(0, max).toString('utf8'), truncated: buf.length > max };
}

/** `http_fetch`: HTTP GET to allow-listed hosts only; redirects are followed only to allow-listed hosts. */
export function httpFetchTool(policy: HttpFetchPolicy): ToolDefinition {
  const max = policy.maxBodyBytes ?? 256 * 1024;
  return {
    name: 'http_fetch',
    description: `HTTP GET a URL on an allow-listed host (${policy.allowHosts.join(', ') || 'none configured'}).`,
    inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'], additionalProperties: false },
    sideEffect: false,
    async run(args, ctx) {
      let url = parseUrl(args.url);
      for (let hop = 0; hop < 5; hop++) {
        if (!hostAllowed(url, policy.allowHosts)) {
          throw new RuntimeError('PolicyDenied', `host ${url.host} is not on the http_fetch allow-list`, { details: { host: url.host } });
        }
        let res: Response;
        try {
          res = await fetch(url, { method: 'GET', redirect: 'manual', signal: ctx.signal ?? AbortSignal.timeout(policy.timeoutMs ?? 30_000) });
        } catch (e) {
          throw new RuntimeError('ToolError', `http_fetch ${url.host}: ${(e as Error).message}`, { retryable: true });
        }
        if (res.status >= 300 && res.status < 400 && res.headers.get('location')) {
          url = parseUrl(new URL(res.headers.get('location') as string, url).toString());
          continue;
        }
        const { text, truncated } = await readCapped(res, max);
        return { url: url.toString(), status: res.status, contentType: res.headers.get('content-type'), body: text, truncated };
      }
      throw new RuntimeError('ToolError', 'http_fetch: too many redirects');
    },
  };
}

/** Policy of `web-search`: the provider endpoint (GET `<url>?q=…&n=…`, JSON answer). */
export interface WebSearchPolicy {
  readonly url?: string;
  readonly apiKey?: string;
  readonly timeoutMs?: number;
}

/** `web-search`: queries the configured search provider over HTTP and returns its results. */
export function webSearchTool(policy: WebSearchPolicy): ToolDefinition {
  return {
    name: 'web-search',
    description: 'Search the web; returns a list of {title, url, snippet}.',
    inputSchema: { type: 'object', properties: { query: { type: 'string' }, count: { type: 'integer', minimum: 1, maximum: 20 } }, required: ['query'], additionalProperties: false },
    sideEffect: false,
    async run(args, ctx) {
      if (!policy.url) throw new RuntimeError('ConfigError', 'web-search has no provider configured (set STEPFORGE_WEB_SEARCH_URL)');
      if (typeof args.query !== 'string' || args.query.length === 0) throw new RuntimeError('InvalidInput', 'query must be a non-empty string');
      const url = new URL(policy.url);
      url.searchParams.set('q', args.query);
      url.searchParams.set('n', String(typeof args.count === 'number' ? args.count : 5));
      let res: Response;
      try {
        res = await fetch(url, {
          headers: { accept: 'application/json', ...(policy.apiKey ? { authorization: `Bearer ${policy.apiKey}` } : {}) },
          signal: ctx.signal ?? AbortSignal.timeout(policy.timeoutMs ?? 30_000),
        });
      } catch (e) {
        throw markOutcomeUnknown(new RuntimeError('ToolError', `web-search: ${(e as Error).message}`, { retryable: true }));
      }
      if (!res.ok) throw new RuntimeError('ToolError', `web-search provider answered HTTP ${res.status}`, { retryable: res.status >= 500 });
      const body = (await res.json()) as { results?: unknown[] } | unknown[];
      const results = Array.isArray(body) ? body : body.results ?? [];
      return { query: args.query, results };
    },
  };
}
