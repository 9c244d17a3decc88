import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { RuntimeError } from '../errors/RuntimeError.js';

/** Which hosts outbound HTTP of tools and connectors may reach (RuntimeConfig.tools). */
export interface OutboundPolicy {
  /** `api.example.com`, `127.0.0.1:8080` or `*.example.org`; empty: any public host (unless `requireListed`). */
  readonly allowHosts: readonly string[];
  /** Let any name reach private networks and loopback (metadata and link-local addresses never). */
  readonly allowPrivateNetworks?: boolean;
  /** Refuse a host that is not on `allowHosts` even when the list is empty (http_fetch). */
  readonly requireListed?: boolean;
  /** Who asks, for messages: `http_fetch`, `http.request`. */
  readonly what: string;
  /** The resolver (dns.lookup's shape); tests give one that answers as an attacker's DNS would. */
  readonly lookup?: (
    hostname: string,
    options: { all: true },
    callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
  ) => void;
}

/** What an address is, for the policy: public, private (RFC 1918, ULA, CGNAT, loopback), or never reachable. */
export type AddressClass = 'public' | 'private' | 'metadata' | 'link-local' | 'reserved';

/** Names of cloud metadata services, refused whatever they resolve to. */
const METADATA_NAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.internal',
]);

function ipv4Class(ip: string): AddressClass {
  const [a, b] = ip.split('.').map(Number) as [number, number, number, number];
  if (ip === '169.254.169.254' || ip === '169.254.170.2' || ip === '100.100.100.200') return 'metadata';
  if (a === 169 && b === 254) return 'link-local';
  if (a === 0 || a >= 224) return 'reserved';
  if (a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127))
    return 'private';
  if (a === 192 && b === 0) return 'reserved';
  if (a === 198 && (b === 18 || b === 19)) return 'private';
  return 'public';
}

/** The 8 groups of an IPv6 address as numbers (`::` expanded, an embedded IPv4 tail converted). */
function ipv6Groups(ip: string): number[] {
  let s = ip.toLowerCase().replace(/%.*$/, '');
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    s = s.slice(0, -v4[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = s.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => Number.parseInt(g, 16));
}

/** What an IP address is (see AddressClass); anything that is not an IP address is `reserved`. */
export function addressClass(ip: string): AddressClass {
  const family = isIP(ip.replace(/^\[(.*)\]$/, '$1'));
  const bare = ip.replace(/^\[(.*)\]$/, '$1');
  if (family === 4) return ipv4Class(bare);
  if (family !== 6) return 'reserved';
  const g = ipv6Groups(bare);
  const embedded = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach the IPv4 address they carry.
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return ipv4Class(embedded(g[6]!, g[7]!));
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return ipv4Class(embedded(g[6]!, g[7]!));
  if (g.every((x) => x === 0)) return 'reserved';
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return 'private';
  // fd00:ec2::254, the EC2 instance metadata service over IPv6.
  if (g[0] === 0xfd00 && g[1] === 0x0ec2 && g.slice(2, 7).every((x) => x === 0) && g[7] === 0x254) return 'metadata';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0]! & 0xfe00) === 0xfc00) return 'private';
  if ((g[0]! & 0xff00) === 0xff00) return 'reserved';
  return 'public';
}

/** The allow-list entry a URL's host matches: exact (`host`, `host:port`) or a `*.suffix`. */
function listedAs(url: URL, allow: readonly string[]): 'exact' | 'wildcard' | undefined {
  const host = url.hostname.toLowerCase();
  const hostPort = url.host.toLowerCase();
  let found: 'exact' | 'wildcard' | undefined;
  for (const a of allow) {
    const p = a.toLowerCase();
    if (p.startsWith('*.')) {
      if (host.endsWith(p.slice(1))) found ??= 'wildcard';
    } else if (p === host || p === hostPort) {
      return 'exact';
    }
  }
  return found;
}

function refused(policy: OutboundPolicy, url: URL, message: string, details: Record<string, unknown>): RuntimeError {
  return new RuntimeError('PolicyDenied', message, { details: { host: url.host, tool: policy.what, ...details } });
}

/**
 * Checks a URL's host against the policy before any connection: the allow-list, metadata names,
 * and an IP literal's class. Returns whether private addresses are allowed for it: with
 * `allowPrivateNetworks`, or when the allow-list names this very IP literal or `localhost`.
 */
export function checkOutboundHost(url: URL, policy: OutboundPolicy): { readonly privateAllowed: boolean } {
  const listed = listedAs(url, policy.allowHosts);
  if (listed === undefined && (policy.requireListed || policy.allowHosts.length > 0)) {
    throw refused(policy, url, `host ${url.host} is not on the ${policy.what} allow-list`, { reason: 'not_allowed' });
  }
  const hostname = url.hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  if (METADATA_NAMES.has(hostname)) {
    throw refused(policy, url, `${policy.what} never reaches ${url.host}: it is a cloud metadata service`, { reason: 'metadata' });
  }
  const literal = isIP(hostname) !== 0;
  const privateAllowed = policy.allowPrivateNetworks === true || (listed === 'exact' && (literal || hostname === 'localhost'));
  if (literal) checkAddress(url, policy, hostname, privateAllowed);
  return { privateAllowed };
}

function checkAddress(url: URL, policy: OutboundPolicy, address: string, privateAllowed: boolean): void {
  const kind = addressClass(address);
  if (kind === 'public' || (kind === 'private' && privateAllowed)) return;
  const why =
    kind === 'metadata'
      ? 'a cloud metadata service address'
      : kind === 'link-local'
        ? 'a link-local address'
        : kind === 'private'
          ? 'a private or loopback address (allow it by listing that address in http.allowHosts, or set http.allowPrivateNetworks, in stepforge.config.json)'
          : 'not a routable address';
  const what =
    address === url.hostname.replace(/^\[(.*)\]$/, '$1') ? `${url.hostname} is` : `${url.hostname} resolves to ${address}, which is`;
  throw refused(policy, url, `${policy.what} refuses ${url.host}: ${what} ${why}`, { reason: kind, address });
}

/** A DNS lookup whose every answer is checked, so the connection goes to an address the policy allowed (no rebinding between check and connect). */
function checkedLookup(url: URL, policy: OutboundPolicy, privateAllowed: boolean): LookupFunction {
  return (hostname, options, callback) => {
    const resolve =
      policy.lookup ??
      ((h: string, o: { all: true }, cb: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) =>
        dnsLookup(h, { ...options, ...o }, cb));
    resolve(hostname, { all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses;
      try {
        if (list.length === 0) throw refused(policy, url, `${policy.what}: ${hostname} has no address`, { reason: 'no_address' });
        for (const a of list) checkAddress(url, policy, a.address, privateAllowed);
      } catch (e) {
        return callback(e as NodeJS.ErrnoException, '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** An outbound answer, with its body read up to the cap. */
export interface OutboundResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/**
 * One HTTP request of a tool or connector under the outbound policy: the host checked (see
 * checkOutboundHost), the name resolved and every address checked, the connection made to the
 * address that was checked, and the answer streamed: past `maxBodyBytes` the read stops, the
 * connection is closed and the call fails with `OutputTooLarge`, so an endless answer costs at
 * most the cap in memory. Redirects are not followed (the caller decides, and checks again).
 */
export function outboundRequest(
  url: URL,
  init: {
    readonly method?: string;
    readonly headers?: Record<string, string>;
    readonly body?: string;
    readonly timeoutMs?: number;
    readonly signal?: AbortSignal;
    readonly maxBodyBytes: number;
  },
  policy: OutboundPolicy,
): Promise<OutboundResponse> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return Promise.reject(
      refused(policy, url, `${policy.what}: only http and https URLs are allowed, got ${url.protocol}`, { reason: 'scheme' }),
    );
  }
  let privateAllowed: boolean;
  try {
    ({ privateAllowed } = checkOutboundHost(url, policy));
  } catch (e) {
    return Promise.reject(e);
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<OutboundResponse>((resolve, reject) => {
    const req = send(
      url,
      {
        method: init.method ?? 'GET',
        headers: init.headers ?? {},
        lookup: checkedLookup(url, policy, privateAllowed),
        timeout: init.timeoutMs ?? 30_000,
        ...(init.signal ? { signal: init.signal } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > init.maxBodyBytes) {
            chunks.length = 0;
            req.destroy();
            res.destroy();
            reject(
              new RuntimeError(
                'OutputTooLarge',
                `${policy.what}: the answer of ${url.host} is over the ${init.maxBodyBytes}-byte cap; the rest was not read`,
                {
                  details: { host: url.host, limit: init.maxBodyBytes, code: 'response_too_large' },
                },
              ),
            );
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(Object.assign(new Error(`no answer within ${init.timeoutMs ?? 30_000} ms`), { code: 'ETIMEDOUT' })),
    );
    req.on('error', reject);
    req.end(init.body);
  });
}
