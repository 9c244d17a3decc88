import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorAnswer } from '@stepforge/runtime';
import type { EmbeddedRunService as RunService, RunRecordView } from '@stepforge/embedded';
import { RunViewData } from './runViewData.js';

/**
 * Where the page's bundle is: `npm run build` writes it to packages/cli/dist/web, which is two
 * folders up from this module whether it runs from src/view, dist/view or the CLI's bundle in dist/bundle.
 */
export const WEB_DIR = fileURLToPath(new URL('../../dist/web/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/**
 * The page may run its own scripts and styles and talk to this origin, nothing else: no inline
 * script, no other site, no frames (a page of another site cannot frame it to click for the user).
 */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const STATUSES = new Set(['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']);
/** How long a sign-in code of `runs show --open` can be redeemed: the browser it opens does so at once. */
const CODE_TTL_MS = 60_000;
/** How often a stream looks for a change; loopback reads of one history event are cheap. */
const POLL_MS = 300;
/** A comment line now and then, so a proxy or the browser does not take a quiet stream for a dead one. */
const KEEPALIVE_MS = 15_000;

/** The execution view's routes on `serve`: the page's files (no token: they hold no data) and its data and live stream (token checked by serve first). */
export interface ViewServer {
  /**
   * Answers `GET /`, `/index.html` and `/assets/*` with the bundled page, and `POST /view/session`
   * (a one-time sign-in code for the token); false for any other request.
   */
  serveAsset(req: IncomingMessage, res: ServerResponse): boolean;
  /** Answers `/view/*` (runs, a run, and their server-sent event streams); false for any other path. */
  serveData(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /** Ends the open streams (serve stopping). */
  close(): void;
}

/** The execution view over a run service; `webDir` holds the built page. */
export function createViewServer(service: RunService, projectDir: string, webDir: string = WEB_DIR): ViewServer {
  const data = new RunViewData(service, projectDir);
  // One-time codes for the token: `runs show --open` puts a code, not the token, in the URL it opens
  // (a command line other users of the machine can read), and the page trades it for the token once.
  const codes = new Map<string, number>();
  const streams = new Set<() => void>();
  const assets = new Map<string, Buffer>();
  const asset = (name: string): Buffer | undefined => {
    if (!assets.has(name)) {
      try {
        assets.set(name, readFileSync(webDir + name));
      } catch {
        return undefined;
      }
    }
    return assets.get(name);
  };
  return {
    serveAsset(req, res) {
      const method = req.method ?? 'GET';
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      if (method === 'POST' && path === '/view/session') {
        redeem(req, res, codes, service.stack.endpoints.apiToken);
        return true;
      }
      if (method !== 'GET' && method !== 'HEAD') return false;
      const name = path === '/' || path === '/index.html' ? 'index.html' : /^\/assets\/([a-z0-9-]+\.(?:js|css|png|svg))$/.exec(path)?.[1];
      if (name === undefined) return false;
      const body = asset(name);
      if (body === undefined) {
        const text =
          name === 'index.html'
            ? JSON.stringify({
                error: { code: 'view_not_built', message: `the execution view is not built (no ${webDir}index.html): run npm run build` },
              })
            : JSON.stringify({ error: { code: 'not_found', message: `no asset ${path}` } });
        res.writeHead(name === 'index.html' ? 503 : 404, { 'content-type': 'application/json' });
        res.end(text);
        return true;
      }
      res.writeHead(200, {
        'content-type': TYPES[extname(name)] ?? 'application/octet-stream',
        'content-length': body.length,
        'content-security-policy': CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-cache',
      });
      res.end(method === 'HEAD' ? undefined : body);
      return true;
    },

    async serveData(req, res) {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (!url.pathname.startsWith('/view/')) return false;
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify(body));
      };
      try {
        if (req.method === 'POST' && url.pathname === '/view/session-codes') {
          const now = Date.now();
          for (const [c, at] of codes) if (now - at > CODE_TTL_MS) codes.delete(c);
          const code = randomBytes(24).toString('base64url');
          codes.set(code, now);
          json(201, { code, expiresInSeconds: CODE_TTL_MS / 1000 });
          return true;
        }
        if ((req.method ?? 'GET') !== 'GET') {
          res.writeHead(405, { 'content-type': 'application/json', allow: 'GET' });
          res.end(JSON.stringify({ error: { code: 'method_not_allowed', message: `${req.method} is not allowed on ${url.pathname}` } }));
          return true;
        }
        const status = statusFilter(url.searchParams.get('status'));
        const workflow = url.searchParams.get('workflow') || undefined;
        if (url.pathname === '/view/runs') {
          json(200, { runs: await data.runs({ ...(workflow ? { workflow } : {}), ...(status ? { status } : {}), limit: 200 }) });
          return true;
        }
        if (url.pathname === '/view/stream') {
          stream(req, res, streams, () => data.listFingerprint());
          return true;
        }
        const m = /^\/view\/runs\/([^/]+)(\/stream)?$/.exec(url.pathname);
        if (m) {
          const id = decodeURIComponent(m[1]!);
          if (m[2]) {
            await data.runFingerprint(id); // unknown_run answers 404 before the stream starts
            stream(req, res, streams, () => data.runFingerprint(id));
          } else json(200, await data.run(id));
          return true;
        }
        json(404, { error: { code: 'not_found', message: `no route for GET ${url.pathname}` } });
      } catch (e) {
        if ((e as { name?: string }).name === 'ViewRequestError') {
          json(400, { error: { code: 'invalid_request', message: (e as Error).message } });
          return true;
        }
        const answer = errorAnswer(e);
        res.writeHead(answer.statusCode, answer.headers);
        res.end(answer.body);
      }
      return true;
    },

    close() {
      for (const end of [...streams]) end();
    },
  };
}

/** `POST /view/session {"code"}`: the token for a code minted in the last minute, once; 401 `invalid_code` otherwise. */
function redeem(req: IncomingMessage, res: ServerResponse, codes: Map<string, number>, token: string): void {
  let text = '';
  let size = 0;
  req.setEncoding('utf8');
  req.on('data', (c: string) => {
    size += c.length;
    if (size <= 1024) text += c;
  });
  req.on('end', () => {
    let code: unknown;
    try {
      code = (JSON.parse(text) as { code?: unknown }).code;
    } catch {
      code = undefined;
    }
    const at = typeof code === 'string' ? codes.get(code) : undefined;
    if (typeof code === 'string') codes.delete(code);
    const ok = at !== undefined && Date.now() - at <= CODE_TTL_MS;
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(
      JSON.stringify(
        ok
          ? { token }
          : {
              error: {
                code: 'invalid_code',
                message:
                  'this sign-in code is unknown, used or expired: open the run again with stepforge runs show ID --open, or enter apiToken from .stepforge/stack.json',
              },
            },
      ),
    );
  });
}

/** A `?status=` the list can have (upper-cased), or a named refusal: an unknown one would read as "none". */
function statusFilter(given: string | null): RunRecordView['status'] | undefined {
  if (given === null || given === '') return undefined;
  const upper = given.toUpperCase();
  if (!STATUSES.has(upper))
    throw Object.assign(new Error(`status must be one of ${[...STATUSES].join(', ')}, got '${given}'`), { name: 'ViewRequestError' });
  return upper as RunRecordView['status'];
}

/**
 * A server-sent event stream: `event: change` with the new fingerprint whenever it differs from the
 * last one sent (the first is sent at once). The page reloads what it shows on each change.
 */
function stream(req: IncomingMessage, res: ServerResponse, streams: Set<() => void>, fingerprint: () => Promise<string>): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  let last: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let sinceKeepalive = 0;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    streams.delete(end);
    res.end();
  };
  streams.add(end);
  req.on('close', end);
  const tick = async () => {
    try {
      const now = await fingerprint();
      if (ended) return;
      if (now !== last) {
        last = now;
        res.write(`event: change\ndata: ${JSON.stringify({ fingerprint: now })}\n\n`);
        sinceKeepalive = 0;
      } else if ((sinceKeepalive += POLL_MS) >= KEEPALIVE_MS) {
        res.write(': keepalive\n\n');
        sinceKeepalive = 0;
      }
    } catch (e) {
      if (ended) return;
      res.write(`event: failure\ndata: ${JSON.stringify({ message: (e as Error).message })}\n\n`);
    }
    if (!ended) timer = setTimeout(() => void tick(), POLL_MS);
  };
  void tick();
}
