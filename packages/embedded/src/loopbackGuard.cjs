// The guard in front of every loopback service the embedded stack starts: dynalite (in its worker
// thread), fauxqs and the engine's Step Functions API. Plain CommonJS so the dynalite worker can
// require it as it is, from src (tsx, vitest), from dist (tsc copies it) and beside the CLI bundle.
//
// Why: listening on 127.0.0.1 keeps other machines out, not the user's own browser (any page it
// shows can send requests to a loopback port, and with DNS rebinding read the answers), nor the
// other users and programs of the machine. dynalite answers browsers with
// `Access-Control-Allow-Origin: *` and checks that a signature is there, not that it is right, so a
// page could read every run and rewrite a pending approval's stored call. So each request must
// (1) not come from a browser: no Origin header, no Sec-Fetch-* header, not an OPTIONS preflight,
// and a Host header that names this server's own loopback address and port; and (2) when the
// service has credentials, be signed with AWS Signature Version 4 by them: the per-stack secret
// that only the project's processes can read (.stepforge/stack.json, owner-only). The SDK clients
// sign with it (loopbackClients.ts); a request signed with any other key, or altered after
// signing, or older than 15 minutes, is refused before the service sees it.
'use strict';

const crypto = require('node:crypto');
const { PassThrough } = require('node:stream');

/** How far a request's X-Amz-Date may be from this machine's clock (AWS allows the same). */
const MAX_SKEW_MS = 15 * 60 * 1000;
/** The largest body buffered for verification (dynalite's own cap is 16 MB). */
const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Why a request is refused as a browser's, or undefined. `localPort` is the port the request came
 * in on: the only Host a request from one of the project's processes carries is
 * `127.0.0.1:<port>` (or `localhost:<port>`).
 * @param {{ method?: string, headers: Record<string, string | string[] | undefined> }} req
 * @param {number | undefined} localPort
 * @returns {{ type: string, message: string } | undefined}
 */
function browserRefusal(req, localPort) {
  const h = req.headers;
  if (h.origin !== undefined) {
    return { type: 'AccessDeniedException', message: `requests from web pages are refused (Origin: ${String(h.origin)}): this is a service of the project's embedded stack, for the project's own processes only` };
  }
  if (req.method === 'OPTIONS') {
    return { type: 'AccessDeniedException', message: 'CORS preflight requests are refused: no web page may call this service' };
  }
  for (const name of Object.keys(h)) {
    if (name.startsWith('sec-fetch-')) {
      return { type: 'AccessDeniedException', message: `requests a browser sends (${name}: ${String(h[name])}) are refused: this is a service of the project's embedded stack, for the project's own processes only` };
    }
  }
  const host = typeof h.host === 'string' ? h.host.toLowerCase() : undefined;
  const allowed = localPort === undefined ? [] : [`127.0.0.1:${localPort}`, `localhost:${localPort}`];
  if (host === undefined || !allowed.includes(host)) {
    return { type: 'AccessDeniedException', message: `the Host header '${host ?? '(none)'}' is not this service's address (${allowed.join(' or ') || 'a loopback address'}): another name can be a web page reaching it through DNS rebinding` };
  }
  return undefined;
}

const signingKeys = new Map();

function hmac(key, text) {
  return crypto.createHmac('sha256', key).update(text, 'utf8').digest();
}

function sha256Hex(data) {
  return crypto.createHash('sha256').update(data).digest('hex');
}

/** RFC 3986 escaping, as the SDKs' SigV4 signers do it. */
function escapeUri(s) {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The canonical URI of a path as sent: dot segments removed and each segment escaped again (SigV4 for services other than S3). */
function canonicalPath(path) {
  const segments = [];
  for (const s of path.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') segments.pop();
    else segments.push(s);
  }
  const normalised = `${path.startsWith('/') ? '/' : ''}${segments.join('/')}${segments.length > 0 && path.endsWith('/') ? '/' : ''}`;
  return escapeUri(normalised).replace(/%2F/g, '/');
}

function canonicalQuery(search) {
  const pairs = [];
  for (const [k, v] of new URLSearchParams(search)) {
    if (k === 'X-Amz-Signature') continue;
    pairs.push([escapeUri(k), escapeUri(v)]);
  }
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

function signingKey(secret, date, region, service) {
  const id = `${secret}\n${date}\n${region}\n${service}`;
  let key = signingKeys.get(id);
  if (!key) {
    key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
    if (signingKeys.size > 64) signingKeys.clear();
    signingKeys.set(id, key);
  }
  return key;
}

const WHERE = "sign requests with the stack's credentials (the AWS SDK does, given the accessKeyId and secretAccessKey in .stepforge/stack.json)";

/**
 * Why a request fails Signature Version 4 verification against `credentials`, or undefined when it
 * is signed by them: the Authorization header's key, scope, signed headers and signature are
 * recomputed over the method, path, query, the signed headers and the body as received.
 * @param {{ method?: string, url?: string, headers: Record<string, string | string[] | undefined> }} req
 * @param {Buffer} body
 * @param {{ accessKeyId: string, secretAccessKey: string }} credentials
 * @param {number} [now]
 * @returns {{ type: string, message: string } | undefined}
 */
function signatureRefusal(req, body, credentials, now = Date.now()) {
  const h = req.headers;
  const auth = typeof h.authorization === 'string' ? h.authorization : '';
  if (auth === '') return { type: 'MissingAuthenticationTokenException', message: `the request is not signed: ${WHERE}` };
  const m = /^AWS4-HMAC-SHA256\s+(.*)$/s.exec(auth);
  if (!m) return { type: 'IncompleteSignatureException', message: `the Authorization header is not an AWS4-HMAC-SHA256 signature: ${WHERE}` };
  const params = {};
  for (const part of m[1].split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) params[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  const scope = (params.Credential || '').split('/');
  if (scope.length !== 5 || scope[4] !== 'aws4_request' || !params.SignedHeaders || !/^[0-9a-f]{64}$/.test(params.Signature || '')) {
    return { type: 'IncompleteSignatureException', message: `the Authorization header lacks a well-formed Credential, SignedHeaders or Signature: ${WHERE}` };
  }
  const [keyId, date, region, service] = scope;
  if (keyId !== credentials.accessKeyId) {
    return { type: 'UnrecognizedClientException', message: `the access key '${keyId}' is not this stack's: ${WHERE}` };
  }
  const amzDate = typeof h['x-amz-date'] === 'string' ? h['x-amz-date'] : '';
  const dm = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!dm || amzDate.slice(0, 8) !== date) {
    return { type: 'IncompleteSignatureException', message: 'the request has no X-Amz-Date header matching its credential scope' };
  }
  const at = Date.UTC(Number(dm[1]), Number(dm[2]) - 1, Number(dm[3]), Number(dm[4]), Number(dm[5]), Number(dm[6]));
  if (Math.abs(now - at) > MAX_SKEW_MS) {
    return { type: 'InvalidSignatureException', message: `the request's X-Amz-Date (${amzDate}) is more than 15 minutes from this machine's clock: it is refused as a replay` };
  }
  const signed = params.SignedHeaders.split(';');
  if (!signed.includes('host') || !signed.includes('x-amz-date')) {
    return { type: 'InvalidSignatureException', message: 'the signature must cover the Host and X-Amz-Date headers' };
  }
  const lines = [];
  for (const name of signed) {
    const v = h[name];
    if (v === undefined) return { type: 'InvalidSignatureException', message: `the signed header '${name}' is not in the request` };
    lines.push(`${name}:${(Array.isArray(v) ? v.join(',') : String(v)).trim().replace(/\s+/g, ' ')}\n`);
  }
  const bodyHash = sha256Hex(body);
  const declared = h['x-amz-content-sha256'];
  if (declared !== undefined && declared !== bodyHash) {
    return { type: 'InvalidSignatureException', message: 'the X-Amz-Content-Sha256 header does not match the body (unsigned payloads are refused)' };
  }
  const url = req.url || '/';
  const q = url.indexOf('?');
  const canonical = [
    req.method || 'GET',
    canonicalPath(q === -1 ? url : url.slice(0, q)),
    canonicalQuery(q === -1 ? '' : url.slice(q + 1)),
    lines.join(''),
    params.SignedHeaders,
    bodyHash,
  ].join('\n');
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope.slice(1).join('/'), sha256Hex(canonical)].join('\n');
  const expected = crypto.createHmac('sha256', signingKey(credentials.secretAccessKey, date, region, service)).update(toSign, 'utf8').digest();
  const given = Buffer.from(params.Signature, 'hex');
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
    return { type: 'InvalidSignatureException', message: `the request signature does not match: it was signed with another secret key, or altered after signing; ${WHERE}` };
  }
  return undefined;
}

/** Answers a refusal in the AWS JSON protocols' error shape (the SDKs name the error by `__type`), and closes the connection. */
function refuse(res, status, refusal) {
  const text = JSON.stringify({ __type: refusal.type, message: refusal.message });
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.0',
    'x-amzn-errortype': refusal.type,
    'content-length': Buffer.byteLength(text),
    connection: 'close',
  });
  res.end(text);
}

/**
 * Wraps a server's request listener in the guard: a browser's request is answered 403 before it
 * is read; with `credentials`, the body is read (up to `maxBodyBytes`), the signature checked, and
 * the service then gets a request that replays the same head and body. Without credentials only
 * the browser refusal applies (a bare emulator of a test); the embedded stack always passes them.
 * @param {(req: any, res: any) => void} listener
 * @param {{ credentials?: { accessKeyId: string, secretAccessKey: string }, maxBodyBytes?: number }} [options]
 * @returns {(req: any, res: any) => void}
 */
function guardListener(listener, options = {}) {
  const credentials = options.credentials;
  const maxBody = options.maxBodyBytes || DEFAULT_MAX_BODY_BYTES;
  return function guarded(req, res) {
    const browser = browserRefusal(req, req.socket && req.socket.localPort);
    if (browser) {
      refuse(res, 403, browser);
      req.resume();
      return;
    }
    if (!credentials) {
      listener.call(this, req, res);
      return;
    }
    const server = this;
    const chunks = [];
    let size = 0;
    let over = false;
    req.on('data', (c) => {
      if (over) return;
      size += c.length;
      if (size > maxBody) {
        over = true;
        refuse(res, 413, { type: 'RequestEntityTooLarge', message: `the request body is over ${maxBody} bytes` });
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('error', () => undefined);
    req.on('end', () => {
      if (over) return;
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const bad = signatureRefusal(req, body, credentials);
      if (bad) {
        refuse(res, 403, bad);
        return;
      }
      listener.call(server, replayOf(req, body), res);
    });
  };
}

/** A readable request with `req`'s head that yields `body`: what the service reads instead of the consumed original. */
function replayOf(req, body) {
  const replay = new PassThrough();
  replay.headers = req.headers;
  replay.rawHeaders = req.rawHeaders;
  replay.trailers = {};
  replay.rawTrailers = [];
  replay.method = req.method;
  replay.url = req.url;
  replay.httpVersion = req.httpVersion;
  replay.httpVersionMajor = req.httpVersionMajor;
  replay.httpVersionMinor = req.httpVersionMinor;
  replay.socket = req.socket;
  replay.connection = req.socket;
  replay.complete = true;
  replay.aborted = false;
  replay.setTimeout = (ms, cb) => { req.setTimeout(ms, cb); return replay; };
  replay.end(body);
  return replay;
}

/**
 * Puts the guard in front of every request listener `server` has now (a service built with its
 * own createServer: dynalite, fastify).
 * @param {import('node:http').Server} server
 * @param {{ credentials?: { accessKeyId: string, secretAccessKey: string }, maxBodyBytes?: number }} [options]
 */
function guardServer(server, options = {}) {
  const listeners = server.listeners('request');
  server.removeAllListeners('request');
  const all = function (req, res) {
    for (const l of listeners) l.call(this, req, res);
  };
  server.on('request', guardListener(all, options));
}

module.exports = { browserRefusal, signatureRefusal, guardListener, guardServer };
