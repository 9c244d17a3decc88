import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const require = createRequire(import.meta.url);

/** dynalite listening on loopback from its own thread. */
export interface DynaliteWorker {
  /** e.g. http://127.0.0.1:43121 */
  readonly endpoint: string;
  close(): Promise<void>;
}

// Plain CommonJS evaluated in the worker, so it runs the same from src (tsx, vitest) and dist.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
if (workerData.expressionCache) require(workerData.expressionCache).installExpressionCache(workerData.module);
const dynalite = require(workerData.module);
const server = dynalite(workerData.options);
server.once('error', (e) => parentPort.postMessage({ error: String(e && e.message || e) }));
server.listen(0, workerData.host, () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m !== 'close') return;
  // Idle keep-alive sockets would hold close() for up to 30 s; the store closes in the callback.
  server.close(() => { parentPort.postMessage({ closed: true }); parentPort.close(); });
  if (server.closeAllConnections) server.closeAllConnections();
});
`;

/** The parse cache the worker installs on dynalite's expression parsers (see that file). */
const EXPRESSION_CACHE = fileURLToPath(new URL('./dynaliteExpressionCache.cjs', import.meta.url));

/**
 * Starts dynalite (the DynamoDB API, over real HTTP on loopback) in a worker thread, so the
 * emulator's request parsing and storage run on another core than the engine and the handlers.
 * `options` are dynalite's (`path` for an on-disk store; omitted: in memory). With
 * `expressionCache` (the default) its expression parsers answer repeated expressions from a cache.
 */
export async function startDynaliteWorker(host: string, options: Record<string, unknown>, tuning: { readonly expressionCache?: boolean } = {}): Promise<DynaliteWorker> {
  const expressionCache = tuning.expressionCache === false ? undefined : EXPRESSION_CACHE;
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { module: require.resolve('dynalite'), host, options, expressionCache } });
  const port = await new Promise<number>((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`dynalite worker exited with code ${code} before listening`));
    worker.once('error', reject);
    worker.once('exit', onExit);
    worker.once('message', (m: { port?: number; error?: string }) => {
      // From here on an error in dynalite is unhandled here, as it was when dynalite ran in this thread.
      worker.off('exit', onExit);
      worker.off('error', reject);
      if (m.port !== undefined) resolve(m.port);
      else reject(new Error(`dynalite could not listen on ${host}: ${m.error}`));
    });
  }).catch(async (e: unknown) => {
    await worker.terminate();
    throw e;
  });
  let closing: Promise<void> | undefined;
  return {
    endpoint: `http://${host}:${port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.once('message', () => void worker.terminate());
        worker.postMessage('close');
      });
      return closing;
    },
  };
}
