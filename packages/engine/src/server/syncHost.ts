import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isLoopbackHostname } from './localRequestRefusal.js';

// StartSyncExecution and TestState are the Step Functions operations with a host prefix: the AWS
// SDKs and the AWS CLI send them to `sync-<endpoint host>`, so against `http://127.0.0.1:PORT` they dial
// `sync-127.0.0.1`, a name no resolver knows, and the call fails before it reaches the server.
// Nothing on the server can change what the client resolves; what it can do is (1) answer requests
// whose Host is a `sync-` loopback name, for clients that do reach it under that name, and (2) give
// Node clients a lookup that resolves those names to loopback. The endpoint forms that need neither
// are in docs/engine.md: the AWS CLI with `--endpoint-url http://sfn@127.0.0.1:PORT` (the prefix
// lands in the URL's user part, which botocore leaves out of the host it dials and signs), or
// `AWS_DISABLE_HOST_PREFIX_INJECTION=true`; the JS SDK with `disableHostPrefix: true`.

const SYNC_PREFIX = 'sync-';

/** The host name a `sync-` prefixed loopback name stands for (`sync-127.0.0.1` → `127.0.0.1`), else undefined. */
export function syncLoopbackHost(hostname: string): string | undefined {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (!h.startsWith(SYNC_PREFIX)) return undefined;
  const rest = h.slice(SYNC_PREFIX.length);
  return isLoopbackHostname(rest) ? rest : undefined;
}

/** A Host header value with a `sync-` prefix on a loopback name removed (port kept); others unchanged. */
export function withoutSyncPrefix(host: string | undefined): string | undefined {
  if (host === undefined) return undefined;
  const m = /^([^:[\]]+)(:\d+)?$/.exec(host);
  const base = m ? syncLoopbackHost(m[1]!) : undefined;
  return base !== undefined ? `${base}${m![2] ?? ''}` : host;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `http.Agent` that resolves `sync-<loopback name>` as the loopback name and every
 * other name as `dns.lookup` does: with it, an SFN client of the JS SDK pointed at the engine
 * reaches StartSyncExecution without `disableHostPrefix`.
 */
export function syncHostLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  const base = syncLoopbackHost(hostname);
  const target = base === 'localhost' || base?.endsWith('.localhost') ? '127.0.0.1' : base;
  (dnsLookup as unknown as (h: string, o: LookupOptions, cb: LookupCallback) => void)(target ?? hostname, options, callback);
}
