import type { IncomingHttpHeaders } from 'node:http';

/** Why a loopback server refuses a request that a browser sent on another site's behalf. */
export interface LocalRequestRefusal {
  /** `host_not_allowed` or `origin_not_allowed`. */
  readonly code: 'host_not_allowed' | 'origin_not_allowed';
  readonly message: string;
}

/** Whether a host name (as in a Host header or a URL, IPv6 in brackets or not) is this machine's loopback. */
export function isLoopbackHostname(hostname: string): boolean {
  const h = hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(h) || h === '::1';
}

/**
 * A server that listens on loopback only is still reachable from the user's browser, on behalf of
 * any page it shows: a page can send it requests (a "simple" cross-site POST needs no preflight),
 * and through DNS rebinding (a host name of the attacker's that resolves to 127.0.0.1) read its
 * answers too. Requests from the user's own tools (curl, the SDK, tests) carry a loopback Host and
 * no Origin; so a Host header that names another host (rebinding), or an Origin that is not a
 * loopback page (a cross-site request, or `null` from a sandboxed frame or a file), is refused.
 * No Host header at all (HTTP/1.0) passes: browsers always send one.
 */
export function localRequestRefusal(headers: IncomingHttpHeaders): LocalRequestRefusal | undefined {
  const host = headers.host;
  if (host !== undefined && !isLoopbackHostname(hostnameOf(host))) {
    return {
      code: 'host_not_allowed',
      message: `the Host header '${host}' is not a loopback name: this server answers requests to 127.0.0.1, localhost or [::1] only (another name can be a web page reaching it through DNS rebinding)`,
    };
  }
  const origin = headers.origin;
  if (origin !== undefined && !isLoopbackOrigin(origin)) {
    return {
      code: 'origin_not_allowed',
      message: `requests from web pages of '${origin}' are refused: only pages served from 127.0.0.1, localhost or [::1] may call this server (a cross-site page could otherwise start runs or decide approvals)`,
    };
  }
  return undefined;
}

/** The host name of a Host header value (`name`, `name:port`, `[v6]`, `[v6]:port`). */
function hostnameOf(host: string): string {
  const v6 = /^\[([^\]]*)\]/.exec(host);
  if (v6) return v6[1]!;
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const u = new URL(origin);
    return (u.protocol === 'http:' || u.protocol === 'https:') && isLoopbackHostname(u.hostname);
  } catch {
    return false; // `null` and anything else that is not a URL
  }
}
