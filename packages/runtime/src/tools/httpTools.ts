import { isRuntimeError, RuntimeError } from '../errors/RuntimeError.js';
import { outboundRequest, type OutboundPolicy, type OutboundResponse } from '../net/outboundRequest.js';
import { markOutcomeUnknown } from '../runtime/runIdempotent.js';
import type { ToolDefinition } from './ToolDefinition.js';

/** Policy of `http_fetch`: which hosts, how much body. */
export interface HttpFetchPolicy {
  /** Exact host names (`api.example.com`, `127.0.0.1:8080`) or `*.example.com` suffixes. */
  readonly allowHosts: readonly string[];
  /** Let listed names resolve to private networks and loopback (see OutboundPolicy). */
  readonly allowPrivateNetworks?: boolean;
  readonly maxBodyBytes?: number;
  readonly timeoutMs?: number;
  /** A further check of every URL fetched, redirects included (a task's narrower policy); throws to refuse. */
  readonly checkUrl?: (url: URL) => void;
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
  if (url.username || url.password)
    throw new RuntimeError('PolicyDenied', 'URLs with credentials are refused', { details: { url: url.host } });
  return url;
}

/**
 * `http_fetch`: HTTP GET to allow-listed hosts only, never to a metadata or link-local address,
 * nor to a private one unless allowed (checked on the resolved address it then connects to);
 * redirects are followed only to hosts that pass the same checks; an answer over the cap fails
 * with `OutputTooLarge` once the cap is passed, without reading the rest.
 */
export function httpFetchTool(policy: HttpFetchPolicy): ToolDefinition {
  const max = policy.maxBodyBytes ?? 256 * 1024;
  const outbound: OutboundPolicy = {
    allowHosts: policy.allowHosts,
    allowPrivateNetworks: policy.allowPrivateNetworks ?? false,
    requireListed: true,
    what: 'http_fetch',
  };
  return {
    name: 'http_fetch',
    description: `HTTP GET a URL on an allow-listed host (${policy.allowHosts.join(', ') || 'none configured'}).`,
    inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'], additionalProperties: false },
    sideEffect: false,
    async run(args, ctx) {
      let url = parseUrl(args.url);
      for (let hop = 0; hop < 5; hop++) {
        policy.checkUrl?.(url);
        let res: OutboundResponse;
        try {
          res = await outboundRequest(
            url,
            { method: 'GET', maxBodyBytes: max, timeoutMs: policy.timeoutMs ?? 30_000, ...(ctx.signal ? { signal: ctx.signal } : {}) },
            outbound,
          );
        } catch (e) {
          if (isRuntimeError(e)) throw e;
          throw new RuntimeError('ToolError', `http_fetch ${url.host}: ${(e as Error).message}`, { retryable: true });
        }
        const location = res.headers.location;
        if (res.status >= 300 && res.status < 400 && typeof location === 'string') {
          url = parseUrl(new URL(location, url).toString());
          continue;
        }
        const contentType = res.headers['content-type'];
        return {
          url: url.toString(),
          status: res.status,
          contentType: typeof contentType === 'string' ? contentType : null,
          body: res.body.toString('utf8'),
        };
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
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string' }, count: { type: 'integer', minimum: 1, maximum: 20 } },
      required: ['query'],
      additionalProperties: false,
    },
    sideEffect: false,
    async run(args, ctx) {
      if (!policy.url) throw new RuntimeError('ConfigError', 'web-search has no provider configured (set STEPFORGE_WEB_SEARCH_URL)');
      if (typeof args.query !== 'string' || args.query.length === 0)
        throw new RuntimeError('InvalidInput', 'query must be a non-empty string');
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
      const results = Array.isArray(body) ? body : (body.results ?? []);
      return { query: args.query, results };
    },
  };
}
