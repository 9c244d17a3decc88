import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { StepforgeError } from '@stepforge/compiler';
import { stackFailed } from './stackFailure.js';
import type { LoopbackCredentials } from './loopbackRequestGuard.js';

const require = createRequire(import.meta.url);

/** dynalite listening on loopback from its own thread. */
export interface DynaliteWorker {
  /** e.g. http://127.0.0.1:43121 */
  readonly endpoint: string;
  close(): Promise<void>;
}

/** The worker's script (see that file): it loads dynalite at once and listens when asked. */
const WORKER_SCRIPT = fileURLToPath(new URL('./dynaliteWorker.cjs', import.meta.url));
/** The parse cache the worker installs on dynalite's expression parsers (see that file). */
const EXPRESSION_CACHE = fileURLToPath(new URL('./dynaliteExpressionCache.cjs', import.meta.url));

/**
 * Where the launcher leaves a dynalite worker it started before loading the CLI (bin/loadCli.js,
 * `prewarmDynaliteWorker` there): a process-wide slot, since the launcher is not part of the CLI's
 * module graph (the bundle or dist/ is loaded after it).
 */
const PREWARMED = Symbol.for('stepforge.prewarmedDynaliteWorker');

/** What the launcher leaves in the slot: the worker, whether it has failed or exited since, and how to drop the launcher's listeners. */
interface PrewarmedWorker {
  readonly worker: Worker;
  readonly ended: boolean;
  detach(): void;
}

/** A worker started ahead of time, with the expression cache and still alive, if the launcher left one (taken once). */
function takePrewarmed(expressionCache: boolean): Worker | undefined {
  const slot = globalThis as { [PREWARMED]?: PrewarmedWorker };
  const prewarmed = slot[PREWARMED];
  delete slot[PREWARMED];
  if (!prewarmed) return undefined;
  prewarmed.detach();
  if (expressionCache && !prewarmed.ended) return prewarmed.worker;
  // Not a worker this stack can use (it failed to load dynalite, or has no parse cache): it holds
  // nothing, so ending it is all there is to do, and a new one starts.
  void prewarmed.worker.terminate();
  return undefined;
}

/** How startDynaliteWorker runs dynalite. */
export interface DynaliteWorkerTuning {
  /** Answer repeated expressions from a parse cache (default true). */
  readonly expressionCache?: boolean;
  /**
   * The stack's credentials: every request must be SigV4-signed with them (loopbackGuard.cjs).
   * Browsers' requests are refused either way.
   */
  readonly credentials?: LoopbackCredentials;
}

/**
 * Starts dynalite (the DynamoDB API, over real HTTP on loopback) in a worker thread, so the
 * emulator's request parsing and storage run on another core than the engine and the handlers.
 * `options` are dynalite's (`path` for an on-disk store; omitted: in memory). With
 * `expressionCache` (the default) its expression parsers answer repeated expressions from a cache.
 * A worker the launcher started already (dynalite loaded, nothing open) is used when there is one.
 */
export async function startDynaliteWorker(host: string, options: Record<string, unknown>, tuning: DynaliteWorkerTuning = {}): Promise<DynaliteWorker> {
  const withCache = tuning.expressionCache !== false;
  const worker = takePrewarmed(withCache) ?? new Worker(WORKER_SCRIPT, { workerData: { module: require.resolve('dynalite'), expressionCache: withCache ? EXPRESSION_CACHE : undefined } });
  // The launcher's worker is unref'd so that a command that never needs it can exit.
  worker.ref();
  const port = await new Promise<number>((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`dynalite worker exited with code ${code} before listening`));
    worker.once('error', reject);
    worker.once('exit', onExit);
    worker.once('message', (m: { port?: number; error?: string; code?: string }) => {
      worker.off('exit', onExit);
      worker.off('error', reject);
      if (m.port !== undefined) resolve(m.port);
      else if (m.code === 'store_unreadable') reject(storeError('store_unreadable', `the run store in ${String(options.path)} cannot be opened: ${m.error}`));
      else if (m.code === 'store_in_use') reject(storeError('store_in_use', `the run store in ${String(options.path)} is held by another process: ${m.error}`));
      else reject(new Error(`dynalite could not listen on ${host}: ${m.error}`));
    });
    worker.postMessage({ listen: { host, options, guard: tuning.credentials ? { credentials: tuning.credentials } : {} } });
  }).catch(async (e: unknown) => {
    await worker.terminate();
    throw e;
  });
  // From here on, an error in the worker is dynalite failing under a request (a store file damaged
  // after it opened): the request waits for an answer that never comes, so the command ends here.
  worker.on('error', (e: Error) => {
    const where = options.path !== undefined ? `the run store in ${String(options.path)}` : 'the in-memory run store';
    stackFailed(storeError('store_failed', `${where} failed: ${e.message}`));
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

const DAMAGED = 'the files under .stepforge/dynamodb are damaged or not a store of this version: move that directory aside to start with an empty store (the runs recorded in it are then no longer listed)';
/** What to do about a store that cannot be used, by how it showed. */
const STORE_HINTS = {
  store_unreadable: DAMAGED,
  store_failed: DAMAGED,
  store_in_use: 'another program has this project\'s .stepforge/dynamodb open (a stepforge process that never published its stack, or a tool reading the store): end it, then run the command again',
} as const;

/** A store that cannot be used, as the user's error with its fix. */
function storeError(code: keyof typeof STORE_HINTS, message: string): StepforgeError {
  return new StepforgeError(code, message, { hint: STORE_HINTS[code] });
}
