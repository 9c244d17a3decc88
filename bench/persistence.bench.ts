// Persistence benchmark: step records written and read per second through the runtime's own code
// (DynamoDBPersistenceLayer, runIdempotent, RunStore) on dynalite in-process on loopback.
// Peer: a bare unconditional DocumentClient PutItem on the same dynalite (the floor our code
// adds to). Target from issue 6: at least 500 conditional writes per second.
import { createRequire } from 'node:module';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { runtimeConfigFromEnv } from '../functions/src/config/RuntimeConfig.js';
import { ensureTables } from '../functions/src/persistence/Tables.js';
import { Runtime } from '../functions/src/runtime/Runtime.js';
import { runIdempotent } from '../functions/src/runtime/runIdempotent.js';

const require = createRequire(import.meta.url);
const N = Number(process.env.STEPFORGE_BENCH_N ?? 500);
const CONCURRENCY = 16;

async function pool(n: number, f: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    for (let i = next++; i < n; i = next++) await f(i);
  }));
  return n / ((performance.now() - t0) / 1000);
}

export default async function persistenceBench(): Promise<void> {
  const dynalite = require('dynalite') as (o: Record<string, unknown>) => Server;
  const server = dynalite({ createTableMs: 0 });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const config = runtimeConfigFromEnv({ STEPFORGE_LOG_LEVEL: 'SILENT', STEPFORGE_DYNAMODB_ENDPOINT: endpoint, STEPFORGE_TABLE: 'bench' });
  const rt = new Runtime(config, { dynamodb: new DynamoDBClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }) });
  await ensureTables(rt.db.client, 'bench');
  const now = Date.now();

  // Warm-up (JIT, sockets).
  await pool(200, (i) => rt.idempotency.saveInProgress(`warm-${i}`, { leaseId: 'w', nowMs: now, leaseSeconds: 60, ttlSeconds: 3600, idempotent: false }));

  const peer = await pool(N, (i) => rt.db.doc.send(new PutCommand({ TableName: 'bench', Item: { pk: `RAW#${i}`, sk: 'RAW', v: i } })));
  const claims = await pool(N, (i) => rt.idempotency.saveInProgress(`claim-${i}`, { leaseId: 'l', nowMs: now, leaseSeconds: 60, ttlSeconds: 3600, idempotent: false }));
  const conflicts = await pool(N, (i) => rt.idempotency.saveInProgress(`claim-${i}`, { leaseId: 'x', nowMs: now, leaseSeconds: 60, ttlSeconds: 3600, idempotent: false }).catch((e: Error) => {
    if (e.name !== 'IdempotencyItemAlreadyExistsError') throw e;
  }));
  const cycles = await pool(N, (i) => runIdempotent({ layer: rt.idempotency, key: `cycle-${i}`, clock: Date.now, leaseSeconds: 60, ttlSeconds: 3600 }, async () => ({ i })));
  const stepWrites = await pool(N, (i) => rt.runs.stepFinished('bench-run', `step-${i}`, { status: 'SUCCEEDED', output: { i }, usage: { inputTokens: 1, outputTokens: 1 } }));
  const stepReads = await pool(N, (i) => rt.runs.getStep('bench-run', `step-${i}`));
  const peerReads = await pool(N, (i) => rt.db.doc.send(new GetCommand({ TableName: 'bench', Key: { pk: `RAW#${i}`, sk: 'RAW' } })));
  const replays = await pool(N, (i) => runIdempotent({ layer: rt.idempotency, key: `cycle-${i}`, clock: Date.now, leaseSeconds: 60, ttlSeconds: 3600 }, async () => ({ i })));

  const rows: [string, number, string][] = [
    ['conditional put (claim INPROGRESS)', claims, `target >= 500/s; peer unconditional PutItem ${peer.toFixed(0)}/s`],
    ['conditional put, conflict + old item', conflicts, 'dynalite lacks ReturnValuesOnConditionCheckFailure: +1 read'],
    ['step cycle (claim + commit, 2 writes)', cycles, `= ${(cycles * 2).toFixed(0)} conditional writes/s`],
    ['replay of committed step', replays, 'returns stored output, no recompute'],
    ['step record write (RunStore)', stepWrites, `peer PutItem ${peer.toFixed(0)}/s`],
    ['step record read (RunStore)', stepReads, `peer GetItem ${peerReads.toFixed(0)}/s`],
  ];
  const load = (await import('node:os')).loadavg()[0] ?? 0;
  console.log(`dynalite 4.0.0 in-process on loopback, ${N} ops per row, concurrency ${CONCURRENCY}, load average ${load.toFixed(1)} on ${(await import('node:os')).cpus().length} cores`);
  console.log(`${'operation'.padEnd(42)} ${'ops/s'.padStart(8)}   vs`);
  for (const [name, v, peerText] of rows) console.log(`${name.padEnd(42)} ${v.toFixed(0).padStart(8)}   ${peerText}`);
  await rt.close();
  await new Promise<void>((r) => server.close(() => r()));
}
