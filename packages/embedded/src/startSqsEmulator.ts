import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { guardServer, type LoopbackCredentials } from './loopbackRequestGuard.js';

/** An SQS emulator (fauxqs) listening on one loopback address. */
export interface SqsEmulator {
  /** e.g. http://127.0.0.1:41234 */
  readonly endpoint: string;
  readonly port: number;
  /** Whether fauxqs has been loaded: it is, on the first request. */
  readonly loaded: boolean;
  /** The URL of one of the `queues` it was started with (there once fauxqs loads). */
  queueUrl(name: string): string;
  stop(): Promise<void>;
}

/** The region and host fauxqs is built with: they name its queues' URLs (sqsQueueUrl). */
const FAUXQS_REGION = 'us-east-1';
const FAUXQS_HOST = 'localhost';

/**
 * The URL fauxqs gives queue `name` when it is reached at `endpoint`:
 * `http://sqs.<region>.<host>:<port>/000000000000/<name>`, with the region and host it is built with
 * and the port of the request that created the queue. fauxqs finds a queue by this exact URL; the
 * SDK clients send to the stack's endpoint whatever host the URL names.
 */
export function sqsQueueUrl(endpoint: string, name: string): string {
  return `http://sqs.${FAUXQS_REGION}.${FAUXQS_HOST}:${new URL(endpoint).port}/000000000000/${name}`;
}

/** What the emulator needs of a fauxqs app once built. */
interface FauxqsApp {
  readonly server: { emit(event: 'request', req: IncomingMessage, res: ServerResponse): boolean };
  ready(): PromiseLike<unknown>;
  inject(request: {
    method: string;
    url: string;
    headers: Record<string, string>;
    payload: string;
  }): PromiseLike<{ statusCode: number; body: string; json(): unknown }>;
  close(): PromiseLike<unknown>;
}

/**
 * fauxqs (SQS) on `host` only, on a free port, loaded on its first request. Most workflows never
 * send a message (only approvals, the `sqs.send_message` connector and a definition's own SQS tasks
 * do), and loading fauxqs (fastify and its plugins) cost a `run` more CPU than its five steps: so the
 * port is taken at once with a plain `node:http` server, whose address the stack publishes, and
 * fauxqs is built when a request first arrives; that request and any that come meanwhile wait for
 * it. `queues` are created before the first request is answered (the stack's approval queue), so
 * their URLs can be handed out from the start.
 *
 * Its own `startFauxqs` listens on 0.0.0.0 whatever it is told (its host option only names the host
 * in queue URLs), which would put an unauthenticated queue service of every stack command on the
 * network; so this builds its app (`buildApp`: the same routes, with in-memory stores) and never
 * lets it listen. It also leaves out startFauxqs's FAUXQS_* environment settings (port, logger, an
 * init file), which are not the stack's to take from the user's environment. Behind the loopback
 * guard (loopbackGuard.cjs): browsers' requests are refused, and with `credentials` every request
 * must be signed by them.
 */
export async function startSqsEmulator(
  host = '127.0.0.1',
  options: { readonly credentials?: LoopbackCredentials; readonly queues?: readonly string[] } = {},
): Promise<SqsEmulator> {
  let app: Promise<FauxqsApp> | undefined;
  let loaded: FauxqsApp | undefined;
  const server = createServer();
  let port = 0;
  const load = async (): Promise<FauxqsApp> => {
    const { buildApp } = await import('fauxqs');
    const built = buildApp({ logger: false, host: FAUXQS_HOST, defaultRegion: FAUXQS_REGION }) as unknown as FauxqsApp;
    await built.ready();
    for (const name of options.queues ?? []) {
      // As the SDK's CreateQueue would send it; fauxqs names the queue's URL after the Host header.
      const r = await built.inject({
        method: 'POST',
        url: '/',
        headers: { host: `${host}:${port}`, 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.CreateQueue' },
        payload: JSON.stringify({ QueueName: name }),
      });
      if (r.statusCode !== 200) throw new Error(`the SQS emulator could not create queue ${name}: ${r.statusCode} ${r.body}`);
      // The URL handed out before fauxqs loaded must be the one it made, or messages would go nowhere.
      const made = (r.json() as { QueueUrl?: string }).QueueUrl;
      if (made !== sqsQueueUrl(`http://${host}:${port}`, name))
        throw new Error(`the SQS emulator named queue ${name} ${String(made)}, not ${sqsQueueUrl(`http://${host}:${port}`, name)}`);
    }
    loaded = built;
    return built;
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    app ??= load();
    app.then(
      (a) => a.server.emit('request', req, res),
      (e: unknown) => {
        res.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify({ __type: 'InternalFailure', message: `the SQS emulator did not start: ${(e as Error).message}` }));
      },
    );
  });
  guardServer(server, options.credentials ? { credentials: options.credentials } : {});
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') {
    server.close();
    throw new Error(`the SQS emulator listens on ${String(address)}, not a TCP port`);
  }
  port = address.port;
  const endpoint = `http://${host}:${port}`;
  return {
    endpoint,
    port,
    get loaded() {
      return loaded !== undefined;
    },
    queueUrl: (name) => sqsQueueUrl(endpoint, name),
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      if (app)
        await app.then(
          (a) => a.close(),
          () => undefined,
        );
    },
  };
}
