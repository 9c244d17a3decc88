// Persistence benchmark: step records written and read per second through the runtime's own code
// (DynamoDBPersistenceLayer, runIdempotent, RunStore) on dynalite over HTTP on loopback, in two
// wirings side by side: the embedded stack's (dynalite in its worker thread, the loopback SDK
// clients: undici transport, aws4 signer), which the target is read against, and dynalite in this
// thread with the SDK's default clients (what a plain test setup does, and this bench's only row
// before). Peer in each: a bare unconditional DocumentClient PutItem on the same dynalite (the floor
// our code adds to). Target: at least 500 conditional writes per second.
import { createRequire } from 'node:module';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { loopbackDynamoClients } from '../packages/embedded/src/loopbackClients.js';
import { startDynaliteWorker } from '../packages/embedded/src/startDynaliteWorker.js';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { runtimeConfigFromEnv } from '../packages/runtime/src/config/RuntimeConfig.js';
import { ensureTables } from '../packages/runtime/src/persistence/Tables.js';
import { Runtime } from '../packages/runtime/src/runtime/Runtime.js';
import { runIdempotent } from '../packages/runtime/src/runtime/runIdempotent.js';

const require = createRequire(import.meta.url);
const N = Number(process.env.STEPFORGE_BENCH_N ?? 500);
const CONCURRENCY = 16;

async function pool(n: number, f: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < n; i = next++) await f(i);
    }),
  );
  return n / ((performance.now() - t0) / 1000);
}

/** One wiring's figures (ops/s). */
interface Figures {
  peer: number;
  claims: number;
  conflicts: number;
  cycles: number;
  replays: number;
  stepWrites: number;
  stepReads: number;
  peerReads: number;
}

async function measure(endpoint: string, deps: { dynamodb: DynamoDBClient; dynamodbCommands?: DynamoDBClient }): Promise<Figures> {
  const config = runtimeConfigFromEnv({ STEPFORGE_LOG_LEVEL: 'SILENT', STEPFORGE_DYNAMODB_ENDPOINT: endpoint, STEPFORGE_TABLE: 'bench' });
  const rt = new Runtime(config, deps);
  try {
    await ensureTables(rt.db.client, 'bench');
    const now = Date.now();
    // Warm-up (JIT, sockets).
    await pool(200, (i) =>
      rt.idempotency.saveInProgress(`warm-${i}`, { leaseId: 'w', nowMs: now, leaseSeconds: 60, ttlSeconds: 3600, idempotent: false }),
    );
    const peer = await pool(N, (i) => rt.db.doc.send(new PutCommand({ TableName: 'bench', Item: { pk: `RAW#${i}`, sk: 'RAW', v: i } })));
    const claims = await pool(N, (i) =>
      rt.idempotency.saveInProgress(`claim-${i}`, { leaseId: 'l', nowMs: now, leaseSeconds: 60, ttlSeconds: 3600, idempotent: false }),
    );
    const conflicts = await pool(N, (i) =>
      rt.idempotency
        .saveInProgress(`claim-${i}`, { leaseId: 'x', nowMs: now, leaseSeconds: 60, ttlSeconds: 3600, idempotent: false })
        .catch((e: Error) => {
          if (e.name !== 'IdempotencyItemAlreadyExistsError') throw e;
        }),
    );
    const cycles = await pool(N, (i) =>
      runIdempotent({ layer: rt.idempotency, key: `cycle-${i}`, clock: Date.now, leaseSeconds: 60, ttlSeconds: 3600 }, async () => ({ i })),
    );
    const stepWrites = await pool(N, (i) =>
      rt.runs.stepFinished('bench-run', `step-${i}`, { status: 'SUCCEEDED', output: { i }, usage: { inputTokens: 1, outputTokens: 1 } }),
    );
    const stepReads = await pool(N, (i) => rt.runs.getStep('bench-run', `step-${i}`));
    const peerReads = await pool(N, (i) => rt.db.doc.send(new GetCommand({ TableName: 'bench', Key: { pk: `RAW#${i}`, sk: 'RAW' } })));
    const replays = await pool(N, (i) =>
      runIdempotent({ layer: rt.idempotency, key: `cycle-${i}`, clock: Date.now, leaseSeconds: 60, ttlSeconds: 3600 }, async () => ({ i })),
    );
    return { peer, claims, conflicts, cycles, replays, stepWrites, stepReads, peerReads };
  } finally {
    await rt.close();
  }
}

export default async function persistenceBench(): Promise<void> {
  // The embedded stack's wiring.
  const credentials = { accessKeyId: 'bench', secretAccessKey: 'bench' };
  const worker = await startDynaliteWorker('127.0.0.1', { createTableMs: 0 }, { credentials });
  const clients = loopbackDynamoClients(worker.endpoint, credentials);
  let embedded: Figures;
  try {
    embedded = await measure(worker.endpoint, { dynamodb: clients.dynamodb, dynamodbCommands: clients.dynamodbCommands });
  } finally {
    clients.dynamodb.destroy();
    clients.dynamodbCommands.destroy();
    await worker.close();
  }
  // dynalite in this thread, the SDK's default clients.
  const dynalite = require('dynalite') as (o: Record<string, unknown>) => Server;
  const server = dynalite({ createTableMs: 0 });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let plain: Figures;
  try {
    plain = await measure(endpoint, {
      dynamodb: new DynamoDBClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }),
    });
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }

  const both = (f: (x: Figures) => number) => `${f(embedded).toFixed(0)} / ${f(plain).toFixed(0)}/s`;
  const rows: [string, (f: Figures) => number, string][] = [
    ['conditional put (claim INPROGRESS)', (f) => f.claims, `peer unconditional PutItem ${both((f) => f.peer)}`],
    ['conditional put, conflict + old item', (f) => f.conflicts, 'dynalite lacks ReturnValuesOnConditionCheckFailure: +1 read'],
    ['step cycle (claim + commit, 2 writes)', (f) => f.cycles, `= ${both((f) => f.cycles * 2)} conditional writes`],
    ['replay of committed step', (f) => f.replays, 'returns stored output, no recompute'],
    ['step record write (RunStore)', (f) => f.stepWrites, `peer PutItem ${both((f) => f.peer)}`],
    ['step record read (RunStore)', (f) => f.stepReads, `peer GetItem ${both((f) => f.peerReads)}`],
  ];
  const os = await import('node:os');
  console.log(
    `dynalite 4.0.0 on loopback, ${N} ops per row, concurrency ${CONCURRENCY}, load average ${(os.loadavg()[0] ?? 0).toFixed(1)} on ${os.cpus().length} cores`,
  );
  console.log(
    "embedded: the embedded stack's wiring (dynalite worker thread, loopback clients); in-thread: dynalite in this thread, the SDK's default clients",
  );
  console.log(`${'operation'.padEnd(40)} ${'embedded ops/s'.padStart(15)} ${'in-thread ops/s'.padStart(16)}   vs (embedded / in-thread)`);
  for (const [name, value, peerText] of rows) {
    console.log(`${name.padEnd(40)} ${value(embedded).toFixed(0).padStart(15)} ${value(plain).toFixed(0).padStart(16)}   ${peerText}`);
  }
  const writes = embedded.claims;
  console.log(
    `target: >= 500 conditional writes/s — embedded stack ${writes.toFixed(0)}/s ${writes >= 500 ? 'met' : 'NOT met'}; in-thread ${plain.claims.toFixed(0)}/s ${plain.claims >= 500 ? 'met' : 'NOT met'}`,
  );
}
