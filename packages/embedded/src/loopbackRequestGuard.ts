import { randomBytes } from 'node:crypto';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';

/** The per-stack secret the loopback services verify SigV4 signatures against. */
export interface LoopbackCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** Why a request is refused: the AWS error type (`__type`) and a message that says what to do. */
export interface GuardRefusal {
  readonly type: string;
  readonly message: string;
}

/** Options of the guard: the stack's credentials (signatures unchecked without) and the body cap. */
export interface GuardOptions {
  readonly credentials?: LoopbackCredentials;
  readonly maxBodyBytes?: number;
}

interface GuardModule {
  browserRefusal(req: Pick<IncomingMessage, 'method' | 'headers'>, localPort: number | undefined): GuardRefusal | undefined;
  signatureRefusal(
    req: Pick<IncomingMessage, 'method' | 'url' | 'headers'>,
    body: Buffer,
    credentials: LoopbackCredentials,
    now?: number,
  ): GuardRefusal | undefined;
  guardListener(listener: RequestListener, options?: GuardOptions): RequestListener;
  guardServer(server: Server, options?: GuardOptions): void;
}

// The guard is CommonJS (loopbackGuard.cjs) because the dynalite worker thread requires it as it
// is; this process loads the same file, beside this module (src, dist, or the bundle's folder).
const guard = createRequire(import.meta.url)('./loopbackGuard.cjs') as GuardModule;

/** Why a request is a browser's (Origin, Sec-Fetch-*, OPTIONS, a Host other than this server's), or undefined. */
export const browserRefusal: GuardModule['browserRefusal'] = guard.browserRefusal;
/** Why a request is not SigV4-signed by `credentials` (over the body as received), or undefined. */
export const signatureRefusal: GuardModule['signatureRefusal'] = guard.signatureRefusal;
/** A request listener behind the guard (see loopbackGuard.cjs). */
export const guardListener: GuardModule['guardListener'] = guard.guardListener;
/** Puts the guard in front of the request listeners a server has now. */
export const guardServer: GuardModule['guardServer'] = guard.guardServer;

/** Fresh credentials for one stack: random, so only a process that reads stack.json has them. */
export function newStackCredentials(): LoopbackCredentials {
  return { accessKeyId: `SFLOCAL${randomBytes(8).toString('hex').toUpperCase()}`, secretAccessKey: randomBytes(30).toString('base64url') };
}

/** A fresh bearer token for serve's HTTP API. */
export function newApiToken(): string {
  return randomBytes(24).toString('base64url');
}

/** Answers a refusal as the guard does (403, AWS JSON error shape), for servers that check themselves. */
export function sendRefusal(res: ServerResponse, status: number, refusal: GuardRefusal): void {
  const text = JSON.stringify({ __type: refusal.type, message: refusal.message });
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.0',
    'x-amzn-errortype': refusal.type,
    'content-length': Buffer.byteLength(text),
    connection: 'close',
  });
  res.end(text);
}
