import { guardServer, type LoopbackCredentials } from './loopbackRequestGuard.js';

/** An SQS emulator (fauxqs) listening on one loopback address. */
export interface SqsEmulator {
  /** e.g. http://127.0.0.1:41234 */
  readonly endpoint: string;
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * fauxqs (SQS) listening on `host` only, on a free port. Its own `startFauxqs` listens on 0.0.0.0
 * whatever it is told (its host option only names the host in queue URLs), which would put an
 * unauthenticated queue service of every stack command on the network; so this builds its app
 * (`buildApp`: the same routes, with in-memory stores) and listens itself. It also leaves out
 * startFauxqs's FAUXQS_* environment settings (port, logger, an init file), which are not the
 * stack's to take from the user's environment. Behind the loopback guard (loopbackGuard.cjs):
 * browsers' requests are refused, and with `credentials` every request must be signed by them.
 */
export async function startSqsEmulator(host = '127.0.0.1', options: { readonly credentials?: LoopbackCredentials } = {}): Promise<SqsEmulator> {
  const { buildApp } = await import('fauxqs');
  const app = buildApp({ logger: false });
  // Fastify adds its request listener when the app is built; the guard goes in front of it.
  guardServer(app.server, options.credentials ? { credentials: options.credentials } : {});
  await app.listen({ port: 0, host });
  const address = app.server.address();
  if (address === null || typeof address === 'string') {
    await app.close();
    throw new Error(`the SQS emulator listens on ${String(address)}, not a TCP port`);
  }
  return { endpoint: `http://${host}:${address.port}`, port: address.port, stop: () => app.close() };
}
