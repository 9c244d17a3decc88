// The launcher (bin/loadCli.js) may start the dynalite worker before the CLI loads, leaving it in a
// process-wide slot; startDynaliteWorker takes it over, or starts its own when it cannot.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DescribeTableCommand, GetItemCommand, ListTablesCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { StepforgeError } from '@stepforge/compiler';
import { loopbackDynamoClients } from '../src/loopbackClients.js';
import { startDynaliteWorker } from '../src/startDynaliteWorker.js';
import { onStackFailure } from '../src/stackFailure.js';

const SLOT = Symbol.for('stepforge.prewarmedDynaliteWorker');
const SCRIPT = fileURLToPath(new URL('../src/dynaliteWorker.cjs', import.meta.url));
const CACHE = fileURLToPath(new URL('../src/dynaliteExpressionCache.cjs', import.meta.url));
const DYNALITE = createRequire(import.meta.url).resolve('dynalite');

/** Starts a worker as the launcher does, and leaves it in the slot; `detached` counts detach() calls. */
function prewarm(module = DYNALITE) {
  const worker = new Worker(SCRIPT, { workerData: { module, expressionCache: CACHE } });
  worker.unref();
  const state = {
    worker,
    ended: false,
    detached: 0,
    detach() {
      state.detached++;
    },
  };
  worker.on('error', () => {
    state.ended = true;
  });
  worker.on('exit', () => {
    state.ended = true;
  });
  (globalThis as Record<symbol, unknown>)[SLOT] = state;
  const exited = new Promise<number>((r) => worker.once('exit', r));
  return { state, exited };
}

async function tables(endpoint: string): Promise<string[]> {
  const { dynamodbCommands } = loopbackDynamoClients(endpoint, { accessKeyId: 'local', secretAccessKey: 'local' });
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

  describe('a damaged on-disk store', () => {
    /** An on-disk store holding one table and item, written to a table file (.ldb) by a reopen. */
    async function storeOnDisk(): Promise<string> {
      const path = mkdtempSync(join(tmpdir(), 'sf-store-'));
      const first = await startDynaliteWorker('127.0.0.1', { path, createTableMs: 0 });
      const { dynamodbCommands: db } = loopbackDynamoClients(first.endpoint, { accessKeyId: 'local', secretAccessKey: 'local' });
      await db.send(
        new CreateTableCommand({
          TableName: 'items',
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        }),
      );
      // As on DynamoDB, a table takes writes once ACTIVE.
      for (let i = 0; i < 200 && (await db.send(new DescribeTableCommand({ TableName: 'items' }))).Table?.TableStatus !== 'ACTIVE'; i++)
        await new Promise((r) => setTimeout(r, 10));
      await db.send(new PutItemCommand({ TableName: 'items', Item: { pk: { S: 'a' } } }));
      db.destroy();
      await first.close();
      // Opening again moves the log into a table file.
      const again = await startDynaliteWorker('127.0.0.1', { path });
      await again.opened;
      await again.close();
      expect(readdirSync(path).some((f) => f.endsWith('.ldb'))).toBe(true);
      return path;
    }
    const contents = (path: string) =>
      Object.fromEntries(
        readdirSync(path)
          .filter((f) => f !== 'LOCK' && !f.startsWith('LOG'))
          .map((f) => [f, readFileSync(join(path, f)).toString('base64')]),
      );

    it("held by another process (LevelDB's LOCK) is waited for, as a previous owner ends", async () => {
      const path = await storeOnDisk();
      const level = createRequire(DYNALITE).resolve('level');
      // Another process opens the store and keeps it until told to end, as an owner in its last moments.
      const holder = spawn(process.execPath, [
        '-e',
        `const { Level } = require(${JSON.stringify(level)}); new Level(${JSON.stringify(path)}).open().then(() => { console.log('held'); process.stdin.once('data', () => process.exit(0)); });`,
      ]);
      let holderEnded = false;
      holder.once('exit', () => {
        holderEnded = true;
      });
      try {
        await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
        const opening = startDynaliteWorker('127.0.0.1', { path });
        setTimeout(() => holder.stdin.write('end\n'), 400);
        // The port is said at once; the store opens only once the other process has let go
        // (before the fix: store_unreadable, at once).
        const w = await opening;
        // A request sent meanwhile waits for the store, and is answered from it.
        const listed = tables(w.endpoint);
        await w.opened;
        expect(holderEnded).toBe(true);
        expect(await listed).toEqual(['items']);
        await w.close();
      } finally {
        holder.kill();
        rmSync(path, { recursive: true, force: true });
      }
    });

    it("that cannot be opened is store_damaged, with LevelDB's reason, and left as it was", async () => {
      const path = await storeOnDisk();
      try {
        writeFileSync(join(path, 'CURRENT'), 'MANIFEST-999999\n');
        const before = contents(path);
        const w = await startDynaliteWorker('127.0.0.1', { path });
        const err = (await w.opened.catch((e: unknown) => e)) as StepforgeError;
        // Nothing is left to close: the worker ended with the failed open.
        await w.close();
        expect([err.name, err.code]).toEqual(['StepforgeError', 'store_damaged']);
        expect(err.message).toBe(`the run store in ${path} cannot be opened: IO error: ${path}/MANIFEST-999999: No such file or directory`);
        expect(err.hint).toMatch(
          /^no store file was deleted to get past the damage: the files under \.stepforge\/dynamodb are kept\. Restore that directory from a backup/,
        );
        expect(contents(path)).toEqual(before);
      } finally {
        rmSync(path, { recursive: true, force: true });
      }
    });

    it("that fails under a request is reported as store_damaged to the stack's failure handler", async () => {
      const path = await storeOnDisk();
      const failed = new Promise<StepforgeError>((resolve) => {
        const off = onStackFailure((e) => {
          off();
          resolve(e);
        });
      });
      const w = await startDynaliteWorker('127.0.0.1', { path });
      await w.opened;
      const { dynamodbCommands: db } = loopbackDynamoClients(w.endpoint, { accessKeyId: 'local', secretAccessKey: 'local' });
      try {
        for (const f of readdirSync(path).filter((n) => n.endsWith('.ldb'))) writeFileSync(join(path, f), Buffer.alloc(300, 7));
        // The request never gets an answer: the worker ends under it.
        void db.send(new GetItemCommand({ TableName: 'items', Key: { pk: { S: 'a' } } })).catch(() => undefined);
        const e = await failed;
        expect([e.name, e.code]).toEqual(['StepforgeError', 'store_damaged']);
        expect(e.message).toMatch(new RegExp(`^the run store in ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} failed: `));
      } finally {
        db.destroy();
        await Promise.race([w.close(), new Promise((r) => setTimeout(r, 500))]);
        rmSync(path, { recursive: true, force: true });
      }
    });
  });
});
