import { join } from 'node:path';
import type { MessagePort } from 'node:worker_threads';
import { ensureDirectory } from './ensureDirectory.js';
import { startDynaliteWorker, storeError, type StoreAnswer, type StoreRequest } from './startDynaliteWorker.js';
import { storeState } from './storeState.js';
import { startSqsEmulator } from './startSqsEmulator.js';
import type { LoopbackCredentials } from './loopbackRequestGuard.js';

/** The loopback emulators the embedded stack runs in-process. */
export interface Emulators {
  /** DynamoDB endpoint (dynalite), e.g. http://127.0.0.1:43121 */
  readonly dynamodbEndpoint: string;
  /**
   * Settles once dynalite's store has opened: the endpoints are known before (the store opens on
   * the worker's thread meanwhile), and requests sent before wait for it (startDynaliteWorker).
   * With the answers to `prepare`.
   */
  readonly dynamodbOpened: Promise<readonly StoreAnswer[]>;
  /** Whether the store is new (in memory, or created on disk by this start), and so holds no table yet. */
  readonly dynamodbCreated: boolean;
  /** A private channel to dynalite for this process's own clients (startDynaliteWorker's connect). */
  connectDynamodb(): MessagePort;
  /** SQS endpoint (fauxqs, loaded on its first request). */
  readonly sqsEndpoint: string;
  /** The URL of one of the queues the emulators were started with (`queues`). */
  sqsQueueUrl(name: string): string;
  /** Whether the SQS emulator has been needed (and so loaded) yet. */
  readonly sqsLoaded: boolean;
  close(): Promise<void>;
}

/** Options of startEmulators. */
export interface EmulatorOptions {
  /** Directory for dynalite's LevelDB files; omit for in-memory (tests, benchmarks). */
  readonly dataDir?: string;
  readonly host?: string;
  /**
   * 'read': the store must be there already; it is opened, never created. 'write' (the default)
   * creates it when there is none. Either way damaged files are never opened (storeState.ts).
   */
  readonly access?: 'read' | 'write';
  /** The stack's credentials: both emulators refuse requests not SigV4-signed with them. */
  readonly credentials: LoopbackCredentials;
  /** Requests dynalite answers as soon as its store has opened (startDynaliteWorker's `prepare`). */
  readonly prepare?: readonly StoreRequest[];
  /** SQS queues that exist from the first SQS request on (their URLs are known at once). */
  readonly queues?: readonly string[];
}

/**
 * Starts dynalite (DynamoDB, in a worker thread of its own) and fauxqs (SQS, loaded on its first request) on random loopback
 * ports, each behind the loopback guard (browsers refused, requests signed with `credentials`
 * only), resolving once both listen: dynalite's store may still be opening (`dynamodbOpened`). dynalite keeps its data on disk under dataDir so run history survives from one command
 * to the next; fauxqs is in-memory, which is fine because approvals and runs of record live in
 * DynamoDB, and SQS only carries notifications.
 */
export async function startEmulators(options: EmulatorOptions): Promise<Emulators> {
  const host = options.host ?? '127.0.0.1';
  const dynamoOptions: Record<string, unknown> = { createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 };
  let createIfMissing = true;
  if (options.dataDir) {
    const path = join(options.dataDir, 'dynamodb');
    const state = storeState(path);
    if (state.kind === 'damaged') throw storeError('store_damaged', `the run store in ${path} cannot be opened: ${state.reason}`);
    if (state.kind === 'absent' && options.access === 'read') {
      throw storeError('store_damaged', `the run store in ${path} is not there; a command that only reads does not create one`);
    }
    createIfMissing = state.kind === 'absent';
    if (createIfMissing) ensureDirectory(path, "dynalite's store directory");
    dynamoOptions.path = path;
  }
  const [dynamoResult, sqsResult] = await Promise.allSettled([
    startDynaliteWorker(host, dynamoOptions, {
      createIfMissing,
      credentials: options.credentials,
      ...(options.prepare ? { prepare: options.prepare } : {}),
    }),
    startSqsEmulator(host, { credentials: options.credentials, ...(options.queues ? { queues: options.queues } : {}) }),
  ]);
  if (dynamoResult.status === 'rejected' || sqsResult.status === 'rejected') {
    if (dynamoResult.status === 'fulfilled') await dynamoResult.value.close();
    if (sqsResult.status === 'fulfilled') await sqsResult.value.stop();
    throw dynamoResult.status === 'rejected' ? dynamoResult.reason : (sqsResult as PromiseRejectedResult).reason;
  }
  const dynamo = dynamoResult.value;
  const sqs = sqsResult.value;
  return {
    dynamodbEndpoint: dynamo.endpoint,
    dynamodbOpened: dynamo.opened,
    dynamodbCreated: createIfMissing,
    connectDynamodb: () => dynamo.connect(),
    sqsEndpoint: sqs.endpoint,
    sqsQueueUrl: (name) => sqs.queueUrl(name),
    get sqsLoaded() {
      return sqs.loaded;
    },
    async close() {
      await Promise.allSettled([sqs.stop(), dynamo.close()]);
    },
  };
}
