// The launcher (bin/loadCli.js) may start the dynalite worker before the CLI loads, leaving it in a
// process-wide slot; startDynaliteWorker takes it over, or starts its own when it cannot.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { loopbackDynamoClients } from '../src/stack/loopbackClients.js';
import { startDynaliteWorker } from '../src/stack/startDynaliteWorker.js';

const SLOT = Symbol.for('stepforge.prewarmedDynaliteWorker');
const SCRIPT = fileURLToPath(new URL('../src/stack/dynaliteWorker.cjs', import.meta.url));
const CACHE = fileURLToPath(new URL('../src/stack/dynaliteExpressionCache.cjs', import.meta.url));
const DYNALITE = createRequire(import.meta.url).resolve('dynalite');

/** Starts a worker as the launcher does, and leaves it in the slot; `detached` counts detach() calls. */
function prewarm(module = DYNALITE) {
  const worker = new Worker(SCRIPT, { workerData: { module, expressionCache: CACHE } });
  worker.unref();
  const state = { worker, ended: false, detached: 0, detach() { state.detached++; } };
  worker.on('error', () => { state.ended = true; });
  worker.on('exit', () => { state.ended = true; });
  (globalThis as Record<symbol, unknown>)[SLOT] = state;
  const exited = new Promise<number>((r) => worker.once('exit', r));
  return { state, exited };
}

async function tables(endpoint: string): Promise<string[]> {
  const { dynamodbCommands } = loopbackDynamoClients(endpoint);
  try {
    return (await dynamodbCommands.send(new ListTablesCommand({}))).TableNames ?? [];
  } finally {
    dynamodbCommands.destroy();
  }
}

describe('Function: startDynaliteWorker', () => {
  it('takes over a worker started ahead of it: that worker listens, and ends when the stack closes it', async () => {
    const { state, exited } = prewarm();
    const w = await startDynaliteWorker('127.0.0.1', {});
    expect((globalThis as Record<symbol, unknown>)[SLOT]).toBeUndefined();
    expect(state.detached).toBe(1);
    expect(state.ended).toBe(false);
    expect(await tables(w.endpoint)).toEqual([]);
    await w.close();
    // close() ends the thread (terminate() once dynalite has closed its store).
    expect(typeof (await exited)).toBe('number');
  });

  it('starts its own worker when the one started ahead failed, and ends that one', async () => {
    const { state, exited } = prewarm('/nonexistent/dynalite.js');
    await expect.poll(() => state.ended).toBe(true);
    const w = await startDynaliteWorker('127.0.0.1', {});
    try {
      expect((globalThis as Record<symbol, unknown>)[SLOT]).toBeUndefined();
      expect(await tables(w.endpoint)).toEqual([]);
    } finally {
      await w.close();
    }
    await exited;
  });

  it('reports a worker that cannot listen, as before', async () => {
    const err = await startDynaliteWorker('256.0.0.1', {}).catch((e: unknown) => e as Error);
    expect((err as Error).message).toMatch(/^dynalite could not listen on 256\.0\.0\.1: /);
  });
});
