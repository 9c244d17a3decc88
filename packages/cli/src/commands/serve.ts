import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseCommandArgs } from './parseCommandArgs.js';
import { EXIT_OK, UsageError, type CliIo } from '../CliIo.js';
import type { ApiRequest } from '../stack/HttpApi.js';
import type { RunService } from '../stack/RunService.js';
import { StepforgeError } from '@stepforge/compiler';
import { StackRegistry } from '../stack/StackRegistry.js';
import { openService } from '../stack/StackSession.js';
import { stackOptions } from './run.js';
import type { Command } from './registry.js';

/** The default port of `stepforge serve`. */
export const DEFAULT_PORT = 8787;

/** A running `serve`: the URL it answers on, and how to stop it (tests). */
export interface ServeHandle {
  readonly url: string;
  readonly sfnEndpoint: string;
  readonly workflows: readonly string[];
  close(): Promise<void>;
}

/** Set by tests to get hold of the running server instead of waiting for a signal. */
export const serveHooks: { onListening?: (h: ServeHandle) => void } = {};

const command: Command = {
  name: 'serve',
  summary: 'serve the HTTP API (and the engine\'s Step Functions API) on loopback',
  usage: 'serve [--port N] [--provider P]',
  async run(argv, io) {
    const parsed = parseCommandArgs(
      argv,
      { port: { type: 'string' }, provider: { type: 'string' }, 'in-memory': { type: 'boolean', default: false }, json: { type: 'boolean', default: false } },
      'serve [--port N] [--provider P]',
    );
    if (parsed.positionals.length > 0) throw new UsageError(`serve takes no arguments (got '${parsed.positionals[0]}')`);
    const port = parsed.values.port === undefined ? DEFAULT_PORT : Number(parsed.values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number, got '${parsed.values.port}'`);
    const { stack, service } = await openService(stackOptions(io, parsed.values));
    let handle: ServeHandle | undefined;
    try {
      // Serving on another process's stack would last only as long as that process: its
      // executions, handlers and store stop with it.
      if (!stack.owner) {
        const holder = new StackRegistry(join(io.cwd, '.stepforge')).findLive();
        throw new StepforgeError('stack_in_use', `another stepforge process${holder ? ` (pid ${holder.pid})` : ''} holds this project's stack, and serve must hold it itself`, {
          hint: 'let that command finish (or stop it), then start serve; while serve runs, other commands use its stack',
        });
      }
      handle = await startServe(io, service, port);
      stack.publishApi(handle.url);
      io.out(`Stepforge API      ${handle.url}   (OpenAPI: ${handle.url}/openapi.json)\n`);
      io.out(`Step Functions API ${handle.sfnEndpoint}   (also on ${handle.url} for requests with an X-Amz-Target header)\n`);
      io.out(`workflows: ${handle.workflows.join(', ') || '(none)'}\n`);
      if (serveHooks.onListening) {
        const h = handle;
        await new Promise<void>((resolve) => serveHooks.onListening!({ ...h, close: async () => { await h.close(); resolve(); } }));
      } else {
        await new Promise<void>((resolve) => {
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
        await handle.close();
      }
      return EXIT_OK;
    } finally {
      await stack.close();
    }
  },
};
export default command;

/**
 * Registers every workflow under workflows/ and examples/, then serves the HTTP API. Requests that
 * carry `X-Amz-Target: AWSStepFunctions.*` are passed to the engine, so one port speaks both.
 */
export async function startServe(io: CliIo, service: RunService, port: number): Promise<ServeHandle> {
  const { createHttpApi } = await import('../stack/HttpApi.js');
  const workflows: string[] = [];
  for (const dir of ['workflows', 'examples']) {
    let files: string[] = [];
    try {
      files = readdirSync(join(io.cwd, dir)).filter((f) => /\.ya?ml$/i.test(f)).sort();
    } catch {
      continue;
    }
    for (const f of files) {
      try {
        const { entry } = await service.catalog.registerFile(join(dir, f));
        workflows.push(entry.name);
      } catch (e) {
        io.err(`warning: ${join(dir, f)} not served: ${(e as Error).message.split('\n')[0]}\n`);
      }
    }
  }
  await service.watchRunning();
  const api = createHttpApi(service);
  const sfnEndpoint = service.stack.endpoints.sfnEndpoint;
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const target = req.headers['x-amz-target'];
      if (typeof target === 'string' && target.startsWith('AWSStepFunctions.')) {
        const r = await fetch(sfnEndpoint, { method: 'POST', headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': target }, body });
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/x-amz-json-1.0' });
        res.end(await r.text());
        return;
      }
      const url = new URL(req.url ?? '/', 'http://localhost');
      const apiReq: ApiRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v[0] : v])),
        ...(body !== '' ? { body } : {}),
      };
      const answer = await api(apiReq);
      res.writeHead(answer.statusCode, answer.headers);
      res.end(answer.body);
    })().catch((e: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'internal', message: String(e) } }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    sfnEndpoint,
    workflows,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
