import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { StepforgeError } from '@stepforge/compiler';
import { stackFailed } from './stackFailure.js';
import type { LoopbackCredentials } from './loopbackRequestGuard.js';
import type { PortAnswer } from './WorkerPortHttpHandler.js';

const require = createRequire(import.meta.url);

/** dynalite listening on loopback from its own thread. */
export interface DynaliteWorker {
  /** e.g. http://127.0.0.1:43121 */
  readonly endpoint: string;
  /**
   * Settles once the store has opened (StepforgeError `store_damaged` or `store_in_use` when it
   * cannot be). The endpoint is known before: requests sent meanwhile wait for the open.
   */
  readonly opened: Promise<readonly StoreAnswer[]>;
  /**
   * A private channel to dynalite: the port to hand a WorkerPortHttpHandler, whose requests reach
   * dynalite's request handler without HTTP (see dynaliteWorker.cjs). One per client; closing it
   * ends that channel only.
   */
  connect(): MessagePort;
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

/** A request answered by the worker as soon as the store opens (DynaliteWorkerTuning's `prepare`): an operation and its JSON body. */
export interface StoreRequest {
  /** e.g. `DynamoDB_20120810.DescribeTable` */
  readonly target: string;
  readonly body: string;
}

/** dynalite's answer to a StoreRequest: its status and JSON body (an error's `__type` and message included). */
export type StoreAnswer = Omit<PortAnswer, 'id'>;

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
  /** Create the on-disk store when there is none (default true); false opens an existing one only. */
  readonly createIfMissing?: boolean;
  /**
   * The stack's credentials: every request must be SigV4-signed with them (loopbackGuard.cjs).
   * Browsers' requests are refused either way.
   */
  readonly credentials?: LoopbackCredentials;
  /**
   * Requests the worker answers, in order, as soon as the store has opened, with `opened`: the
   * caller's first requests, answered on the worker's thread while the caller goes on.
   */
  readonly prepare?: readonly StoreRequest[];
}

/**
 * Starts dynalite (the DynamoDB API, over real HTTP on loopback) in a worker thread, so the
 * emulator's request parsing and storage run on another core than the engine and the handlers.
 * `options` are dynalite's (`path` for an on-disk store; omitted: in memory). With
 * `expressionCache` (the default) its expression parsers answer repeated expressions from a cache.
 * A worker the launcher started already (dynalite loaded, nothing open) is used when there is one.
 */
export async function startDynaliteWorker(
  host: string,
  options: Record<string, unknown>,
  tuning: DynaliteWorkerTuning = {},
): Promise<DynaliteWorker> {
  const withCache = tuning.expressionCache !== false;
  const worker =
    takePrewarmed(withCache) ??
    new Worker(WORKER_SCRIPT, {
      workerData: { module: require.resolve('dynalite'), expressionCache: withCache ? EXPRESSION_CACHE : undefined },
    });
  // The launcher's worker is unref'd so that a command that never needs it can exit.
  worker.ref();
  // The worker says its port first, then that the store has opened (or why it could not): the
  // caller goes on with the port while LevelDB opens on the worker's thread (`opened`).
  const failure = (m: { error?: string; code?: string }): Error =>
    m.code === 'store_unreadable'
      ? storeError('store_damaged', `the run store in ${String(options.path)} cannot be opened: ${m.error}`)
      : m.code === 'store_in_use'
        ? storeError('store_in_use', `the run store in ${String(options.path)} is held by another process: ${m.error}`)
        : new Error(`dynalite could not listen on ${host}: ${m.error}`);
  let portSaid!: { resolve(port: number): void; reject(e: unknown): void };
  let openSaid!: { resolve(answers: readonly StoreAnswer[]): void; reject(e: unknown): void };
  const portKnown = new Promise<number>((resolve, reject) => (portSaid = { resolve, reject }));
  const opened = new Promise<readonly StoreAnswer[]>((resolve, reject) => (openSaid = { resolve, reject }));
  // A store that could not open leaves nothing to close in the worker: it is ended (whoever
  // awaits `opened` gets the reason; the rejection is handled here either way).
  let exited = false;
  worker.once('exit', () => (exited = true));
  opened.catch(() => void worker.terminate());
  const onExit = (code: number) => {
    const e = new Error(`dynalite worker exited with code ${code} before its store opened`);
    portSaid.reject(e);
    openSaid.reject(e);
  };
  const onError = (e: unknown) => {
    portSaid.reject(e);
    openSaid.reject(e);
  };
  // Either may come first (an in-memory store opens before the port is bound); listened for until both have.
  let portHeard = false;
  let openHeard = false;
  const onMessage = (m: { port?: number; opened?: boolean; answers?: StoreAnswer[]; error?: string; code?: string }) => {
    if (m.port !== undefined) {
      portHeard = true;
      portSaid.resolve(m.port);
    } else if (m.opened === true) {
      openHeard = true;
      openSaid.resolve(m.answers ?? []);
    } else if (m.error !== undefined) {
      // Before the port (dynalite could not listen) or after it (the store could not open).
      portHeard = openHeard = true;
      const e = failure(m);
      portSaid.reject(e);
      openSaid.reject(e);
    }
    if (portHeard && openHeard) {
      worker.off('message', onMessage);
      worker.off('exit', onExit);
      worker.off('error', onError);
    }
  };
  worker.on('message', onMessage);
  worker.once('exit', onExit);
  worker.on('error', onError);
  // An existing store is opened as it is, never created anew over damaged files (storeState.ts).
  worker.postMessage({
    listen: {
      host,
      options,
      createIfMissing: tuning.createIfMissing !== false,
      prepare: tuning.prepare ?? [],
      guard: tuning.credentials ? { credentials: tuning.credentials } : {},
    },
  });
  const port = await portKnown.catch(async (e: unknown) => {
    await worker.terminate();
    throw e;
  });
  // From here on, an error in the worker is dynalite failing under a request (a store file damaged
  // after it opened): the request waits for an answer that never comes, so the command ends here.
  let closing: Promise<void> | undefined;
  void opened.then(
    () =>
      worker.on('error', (e: Error) => {
        // A request that reaches the store while it closes finds it closed: that is the stack ending
        // under a late request, not a damaged store.
        if (closing !== undefined) return;
        const where = options.path !== undefined ? `the run store in ${String(options.path)}` : 'the in-memory run store';
        stackFailed(storeError('store_damaged', `${where} failed: ${e.message}`));
      }),
    () => undefined,
  );
  return {
    endpoint: `http://${host}:${port}`,
    opened,
    connect() {
      const { port1, port2 } = new MessageChannel();
      worker.postMessage({ connect: port2 }, [port2]);
      return port1;
    },
    close() {
      // Done once the worker says its store has closed: LevelDB has written and closed its files,
      // so nothing is left for the thread to lose, and the next owner can open the store. The
      // thread then ends on its own (dynaliteWorker.cjs closes all it holds); it is not waited for
      // nor terminated, since ending a thread whose dynalite served requests takes 30-280 ms of CPU
      // (its isolate's teardown), which the process would otherwise spend before it could exit.
      // Unref'd, it keeps no process alive; one that exits first stops it then.
      closing ??= new Promise<void>((resolve) => {
        if (exited) return resolve();
        worker.once('exit', () => resolve());
        const onClosed = (m: { closed?: boolean }) => {
          // Not the open's answer, if the stack closes before its store has opened.
          if (m?.closed !== true) return;
          worker.off('message', onClosed);
          worker.unref();
          resolve();
        };
        worker.on('message', onClosed);
        worker.postMessage('close');
      });
      return closing;
    },
  };
}

/**
 * What to do about a damaged store. Never to move it aside or delete it: the runs are in those
 * files, and a store LevelDB cannot open is most often one small file away from whole (a lost
 * CURRENT names a MANIFEST that is still there).
 */
const DAMAGED =
  'no store file was deleted to get past the damage: the files under .stepforge/dynamodb are kept. Restore that directory from a backup if you have one; otherwise `stepforge store repair` copies it to .stepforge/dynamodb.damaged-<time> and repairs it in place (the copy keeps every file as it was)';
/** What to do about a store that cannot be used, by how it showed. */
const STORE_HINTS = {
  store_damaged: DAMAGED,
  store_in_use:
    "another program has this project's .stepforge/dynamodb open (a stepforge process that never published its stack, or a tool reading the store): end it, then run the command again",
} as const;

/** A store that cannot be used, as the user's error with its fix. */
export function storeError(code: keyof typeof STORE_HINTS, message: string): StepforgeError {
  return new StepforgeError(code, message, { hint: STORE_HINTS[code] });
}
