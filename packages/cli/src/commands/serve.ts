import { timingSafeEqual } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import aws4 from 'aws4';
import type { AddressInfo } from 'node:net';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseCommandArgs } from './parseCommandArgs.js';
import { EXIT_OK, UsageError, type CliIo } from '../CliIo.js';
import type { ServeRequest, ServeResponse } from '@stepforge/runtime';
import {
  type EmbeddedRunService,
  describePolicy,
  type WorkflowEntry,
  StackRegistry,
  signatureRefusal,
  type LoopbackCredentials,
  LOOPBACK_REGION,
  openService,
  type OpenedStack,
  type OpenStackOptions,
  closeOwnedStack,
} from '@stepforge/embedded';
import { codeWorkflowExports, StepforgeError, type NamedWorkflow } from '@stepforge/compiler';
import { errorBody } from '@stepforge/contract';
import { loadLambdaModules, localRequestRefusal, type LambdaModuleError } from '@stepforge/engine';
import { stackOptions } from './run.js';
import { answerRelayedRun, RELAYED_RUN_PATH } from './relayedRun.js';
import type { Command } from './registry.js';
import { COMMAND_TEXT } from './commandText.js';

/** The default port of `stepforge serve`. */
export const DEFAULT_PORT = 8787;

/** A running `serve`: the URL it answers on, and how to stop it (tests). */
export interface ServeHandle {
  readonly url: string;
  readonly sfnEndpoint: string;
  /** The bearer token every API request must carry (`apiToken` in .stepforge/stack.json). */
  readonly token: string;
  /** The workflows served, as printed: the workflow name, and the display name after it when they differ. */
  readonly workflows: readonly string[];
  /** Per workflow, the approval policy its runs are held to (describePolicy). */
  readonly policies: readonly string[];
  close(): Promise<void>;
}

/** How `startServe` is extended. */
export interface ServeOptions {
  /**
   * Handlers of this server beside the API (a browser view's pages and static files): asked, after
   * the token check, for a request whose path no API route has; undefined answers 404 `not_found`.
   */
  readonly fallback?: (req: ServeRequest) => Promise<ServeResponse | undefined>;
  /** The one file to serve (a document, or a module's exported workflows: every one, or `exportName`'s), instead of workflows/ and examples/. */
  readonly only?: { readonly file: string; readonly exportName?: string };
}

/** Set by tests to get hold of the running server instead of waiting for a signal. */
export const serveHooks: { onListening?: (h: ServeHandle) => void } = {};

const command: Command = {
  name: 'serve',
  summary: COMMAND_TEXT.serve.summary,
  usage: COMMAND_TEXT.serve.usage,
  async run(argv, io) {
    const parsed = parseCommandArgs(
      argv,
      {
        port: { type: 'string' },
        provider: { type: 'string' },
        export: { type: 'string' },
        lambda: { type: 'string', multiple: true },
        'in-memory': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
      COMMAND_TEXT.serve.usage,
    );
    const userLambdas = await userLambdasOf(parsed.values.lambda, io.cwd);
    if (parsed.positionals.length > 1) throw new UsageError(`serve takes at most one FILE (got ${parsed.positionals.join(' ')})`);
    const file = parsed.positionals[0];
    if (file === undefined && parsed.values.export !== undefined)
      throw new UsageError('--export names a workflow of the FILE given to serve: give the FILE too');
    const only =
      file === undefined ? undefined : { file, ...(parsed.values.export !== undefined ? { exportName: parsed.values.export } : {}) };
    // A file that does not compile is refused before the stack opens, as run refuses it.
    if (only !== undefined) {
      const { compileWorkflowFile } = await import('@stepforge/embedded');
      const { CODE_MODULE } = await import('@stepforge/embedded/project');
      if (!CODE_MODULE.test(only.file) || only.exportName !== undefined) await compileWorkflowFile(io.cwd, only.file, only);
    }
    const port = parsed.values.port === undefined ? DEFAULT_PORT : Number(parsed.values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UsageError(`--port must be a port number, got '${parsed.values.port}'`);
    const stop = stopSignal();
    let opened: OpenedStack | undefined;
    try {
      // Stopping serve stops it: the commands connected to it take the stack over.
      opened = await holdStack(
        io,
        { ...stackOptions(io, parsed.values), linger: false, ...(userLambdas ? { userLambdas } : {}) },
        stop.stopped,
      );
      if (!opened) return EXIT_OK;
    } finally {
      if (!opened) stop.dispose();
    }
    const { stack, service } = opened;
    let handle: ServeHandle | undefined;
    try {
      handle = await startServe(io, service, port, only !== undefined ? { only } : {});
      stack.publishApi(handle.url);
      io.out(`Stepforge API      ${handle.url}   (OpenAPI: ${handle.url}/openapi.json)\n`);
      io.out(`Execution view     ${handle.url}/   (stepforge runs show ID --open opens a run there, signed in)\n`);
      io.out(`Step Functions API ${handle.sfnEndpoint}   (also on ${handle.url} for requests with an X-Amz-Target header)\n`);
      io.out(
        'API token          apiToken in .stepforge/stack.json (send Authorization: Bearer <token>); the Step Functions API takes SigV4 with its credentials\n',
      );
      io.out(`workflows: ${handle.workflows.join(', ') || '(none)'}\n`);
      if (userLambdas) io.out(`lambdas: ${Object.keys(userLambdas).join(', ')}\n`);
      for (const line of handle.policies) io.out(`  ${line}\n`);
      if (serveHooks.onListening) {
        const h = handle;
        await new Promise<void>((resolve) =>
          serveHooks.onListening!({
            ...h,
            close: async () => {
              await h.close();
              resolve();
            },
          }),
        );
      } else {
        await stop.stopped;
        // The first Ctrl-C stops cleanly: runs still in progress (one waiting for an approval, say)
        // stay RUNNING in the store and go on when the stack is held again. Its listener is gone
        // now, so a second Ctrl-C ends the process at once.
        io.err('stopping: runs in progress stay resumable and go on when serve starts again (Ctrl-C again to force)\n');
        await handle.close();
      }
      return EXIT_OK;
    } finally {
      stop.dispose();
      await stack.close();
      // Also when commands run for thin clients still hold it: they end with it (stack_closed).
      await closeOwnedStack(io.cwd);
    }
  },
};
export default command;

/** `--lambda NAME=MODULE` flags loaded (engine's loadLambdaModules), its errors as StepforgeErrors of the same code. */
async function userLambdasOf(
  specs: readonly string[] | undefined,
  cwd: string,
): Promise<Record<string, (event: unknown, context: unknown) => unknown> | undefined> {
  if (!specs || specs.length === 0) return undefined;
  const { STEP_HANDLER_TABLE } = await import('@stepforge/contract');
  // Through the runtime's importFile, which the CLI's bundle routes through its launcher.
  const { importFile } = await import('@stepforge/runtime/importFile');
  try {
    return (await loadLambdaModules(specs, cwd, new Set(STEP_HANDLER_TABLE.map((h) => h.functionName)), importFile)) as Record<
      string,
      (event: unknown, context: unknown) => unknown
    >;
  } catch (e) {
    if ((e as { name?: unknown }).name === 'LambdaModuleError') {
      const { code, message, file } = e as LambdaModuleError;
      throw new StepforgeError(code, message, file !== undefined ? { details: { file } } : {});
    }
    throw e;
  }
}

/** How often serve looks again while another command holds the stack. */
const HOLDER_POLL_MS = 250;

/**
 * Opens the project's stack as its owner. Serving on another process's stack would last only as
 * long as that process (its executions, handlers and store stop with it), so serve holds it itself.
 * A command that holds it now (`run`, `approvals approve`) ends on its own: serve says so once and
 * waits for it, then takes the stack over. Another serve does not end on its own: that is
 * `error[stack_in_use]`. Undefined when `stopped` resolves (Ctrl-C) while waiting.
 */
async function holdStack(io: CliIo, options: OpenStackOptions, stopped: Promise<void>): Promise<OpenedStack | undefined> {
  const registry = new StackRegistry(join(io.cwd, '.stepforge'));
  let halted = false;
  void stopped.then(() => {
    halted = true;
  });
  let noted = false;
  for (;;) {
    const holder = registry.findLive();
    if (holder === undefined) {
      // Nobody holds it (or only a process that has ended): open it, as owner unless another
      // command claimed it in the meantime, which the next look finds.
      const opened = await openService(options);
      if (opened.stack.owner) return opened;
      await opened.stack.close();
      continue;
    }
    if (holder.apiUrl !== undefined) {
      throw new StepforgeError(
        'stack_in_use',
        `another stepforge serve (pid ${holder.pid}) serves this project's stack at ${holder.apiUrl}`,
        {
          hint: 'use that one (every command of this project connects to it), or stop it before starting serve here',
        },
      );
    }
    if (!noted)
      io.err(
        `note: another stepforge command (pid ${holder.pid}) holds this project's stack; serve starts once it ends (Ctrl-C to give up)\n`,
      );
    noted = true;
    await Promise.race([stopped, new Promise((r) => setTimeout(r, HOLDER_POLL_MS))]);
    if (halted) return undefined;
  }
}

/**
 * SIGINT or SIGTERM, as a promise, and the listeners' removal. The first signal removes both
 * listeners, so the next one has the default effect (the process ends) while the stop is under way.
 */
function stopSignal(): { readonly stopped: Promise<void>; dispose(): void } {
  let on: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    on = () => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve();
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
  return {
    stopped,
    dispose() {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
    },
  };
}

/**
 * Registers the workflows of `only.file` (a document, or a module's exported workflows: every one,
 * or the one `only.exportName` names), or else every workflow under workflows/ and examples/, then
 * serves the HTTP API. Requests that carry `X-Amz-Target: AWSStepFunctions.*` are passed to the
 * engine, so one port speaks both.
 */
export async function startServe(io: CliIo, service: EmbeddedRunService, port: number, options: ServeOptions = {}): Promise<ServeHandle> {
  const [{ routeRequest, runServiceBackend }, { openApiDocument }] = await Promise.all([
    import('@stepforge/runtime'),
    import('@stepforge/contract'),
  ]);
  const only = options.only;
  const workflows: string[] = [];
  const policies: string[] = [];
  // One project: two files whose workflow names meet would be one state machine (the second is refused).
  const project = new Map<string, NamedWorkflow>();
  const served = (entry: WorkflowEntry) => {
    if (workflows.some((w) => w === entry.name || w.startsWith(`${entry.name} (`))) return;
    workflows.push(
      entry.displayName === undefined || entry.displayName === entry.name ? entry.name : `${entry.name} (${entry.displayName})`,
    );
    if (entry.policy) policies.push(`${entry.name}: ${describePolicy(entry.policy, io.cwd)}`);
  };
  if (only !== undefined) {
    // Unlike the folders' files, the file asked for must load: its errors stop serve.
    const { CODE_MODULE, loadCodeModule } = await import('@stepforge/embedded/project');
    const exportNames =
      only.exportName !== undefined || !CODE_MODULE.test(only.file)
        ? [only.exportName]
        : codeWorkflowExports((await loadCodeModule(io.cwd, only.file)).mod);
    if (exportNames.length === 0) {
      throw new StepforgeError(
        'invalid_document',
        `${only.file} exports no workflow: export the result of defineWorkflow, workflow, parallel or stateGraph`,
        { location: { file: only.file, line: 1, column: 1 } },
      );
    }
    // One file: its exports cannot clash with another file's, and a child registered with its caller
    // is registered again, unchanged, as an export of its own (so no project map here).
    for (const exportName of exportNames) {
      const { entry } = await service.catalog.registerFile(only.file, exportName !== undefined ? { exportName } : {});
      served(entry);
    }
  }
  for (const dir of only === undefined ? ['workflows', 'examples'] : []) {
    let files: string[] = [];
    try {
      files = readdirSync(join(io.cwd, dir))
        .filter((f) => /\.ya?ml$/i.test(f))
        .sort();
    } catch {
      continue;
    }
    for (const f of files) {
      try {
        const { entry } = await service.catalog.registerFile(join(dir, f), { project });
        served(entry);
      } catch (e) {
        const code = (e as { name?: string; code?: string }).name === 'StepforgeError' ? `error[${(e as { code: string }).code}] ` : '';
        io.err(`warning: ${join(dir, f)} not served: ${code}${(e as Error).message.split('\n')[0]}\n`);
      }
    }
  }
  await service.watchRunning();
  const backend = runServiceBackend(service, { openApi: openApiDocument() });
  // Another handler of this server (pages, static files) goes in `fallback`: asked for a path no API route has.
  const api = (req: ServeRequest): Promise<ServeResponse> => routeRequest(backend, req, options);
  const { createViewServer } = await import('../view/viewServer.js');
  const view = createViewServer(service, io.cwd);
  const { sfnEndpoint, credentials, apiToken } = service.stack.endpoints;
  const token = Buffer.from(apiToken);
  const server = createServer((req, res) => {
    // Loopback is not private from the user's browser: refuse what other sites' pages send (and
    // read through DNS rebinding) before anything runs.
    const refusal = localRequestRefusal(req.headers);
    if (refusal !== undefined) {
      sendError(res, 403, refusal, { close: true });
      req.resume();
      return;
    }
    // The execution view's page: files that hold no data, so a browser loads them without the token.
    if (view.serveAsset(req, res)) return;
    const target = req.headers['x-amz-target'];
    const sfnRequest = typeof target === 'string' && target.startsWith('AWSStepFunctions.');
    // Nor is it private from the machine's other users and programs: the API answers only requests
    // that carry the stack's token (the Step Functions API: a signature by its credentials, below).
    if (!sfnRequest && !bearerMatches(req.headers.authorization, token)) {
      res.setHeader('www-authenticate', 'Bearer realm="stepforge"');
      sendError(
        res,
        401,
        {
          code: 'unauthorized',
          message:
            req.headers.authorization === undefined
              ? 'this API needs its token: send Authorization: Bearer <token>, with the token from apiToken in .stepforge/stack.json (readable by the user who runs serve only)'
              : "the bearer token is not this serve's: take apiToken from the project's .stepforge/stack.json (a new one is made each time serve starts)",
        },
        { close: true },
      );
      req.resume();
      return;
    }
    void (async () => {
      if (!sfnRequest && (await view.serveData(req, res))) return;
      const body = await readBody(req);
      if (body === undefined) {
        // Stop reading (and close the connection) rather than hold the rest in memory.
        sendError(
          res,
          413,
          {
            code: 'request_too_large',
            message: `the request body is over ${MAX_BODY_BYTES / (1024 * 1024)} MiB, the most API Gateway accepts`,
          },
          { close: true },
        );
        req.destroy();
        return;
      }
      if (sfnRequest) {
        // Signed for this port by the stack's credentials, as the engine's own port requires; passed
        // on signed again for the engine's (the signature covers the Host).
        const bad = signatureRefusal(req, Buffer.from(body, 'utf8'), credentials);
        if (bad !== undefined) {
          res.writeHead(403, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-errortype': bad.type, connection: 'close' });
          res.end(JSON.stringify({ __type: bad.type, message: bad.message }));
          return;
        }
        const r = await forwardSigned(sfnEndpoint, target, body, credentials);
        res.writeHead(r.status, { 'content-type': r.contentType });
        res.end(r.body);
        return;
      }
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (req.method === 'POST' && url.pathname === RELAYED_RUN_PATH) {
        await answerRelayedRun(body, res, io.cwd, (status, error) => sendError(res, status, error));
        return;
      }
      const apiReq: ServeRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v[0] : v])),
        ...(body !== '' ? { body } : {}),
      };
      const answer = await api(apiReq);
      res.writeHead(answer.statusCode, answer.headers);
      res.end(answer.body);
    })().catch((e: unknown) => sendError(res, 500, { code: 'internal', message: String(e) }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(listenError(e, port)));
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    sfnEndpoint,
    token: apiToken,
    workflows,
    policies,
    close: () =>
      new Promise<void>((resolve) => {
        view.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Whether an Authorization header is `Bearer <token>` with this token (compared in constant time). */
function bearerMatches(header: string | undefined, token: Buffer): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m) return false;
  const given = Buffer.from(m[1]!);
  return given.length === token.length && timingSafeEqual(given, token);
}

/** A Step Functions API request sent on to the engine, SigV4-signed by the stack's credentials. */
function forwardSigned(
  endpoint: string,
  target: string,
  body: string,
  credentials: LoopbackCredentials,
): Promise<{ status: number; contentType: string; body: Buffer }> {
  const url = new URL(endpoint);
  const signed = aws4.sign(
    {
      service: 'states',
      region: LOOPBACK_REGION,
      method: 'POST',
      host: url.host,
      path: '/',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': target },
      body,
    },
    { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey },
  );
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method: 'POST', path: '/', headers: signed.headers as Record<string, string> },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 502,
            contentType: String(res.headers['content-type'] ?? 'application/x-amz-json-1.0'),
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** An error answer in the API's one shape (the contract's ErrorBody); `close` ends the connection after it. */
function sendError(
  res: ServerResponse,
  status: number,
  error: { readonly code: string; readonly message: string },
  options: { readonly close?: boolean } = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...(options.close ? { connection: 'close' } : {}) });
  res.end(JSON.stringify(errorBody(error.code, error.message)));
}

/** A port that cannot be listened on, as the user's error it is (`port_in_use`, `port_not_allowed`). */
function listenError(e: NodeJS.ErrnoException, port: number): Error {
  if (e.code === 'EADDRINUSE') {
    return new StepforgeError('port_in_use', `port ${port} on 127.0.0.1 is in use by another program`, {
      hint: 'pick another with --port N, or --port 0 for any free one',
    });
  }
  if (e.code === 'EACCES') {
    return new StepforgeError('port_not_allowed', `this user may not listen on port ${port}`, {
      hint: 'ports below 1024 need privileges: pick another with --port N',
    });
  }
  return e;
}

/** The largest request body served, as API Gateway's payload limit (10 MB). */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** The request body as text, or undefined once it passes MAX_BODY_BYTES (the rest is not read). */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        req.off('data', onData);
        req.pause();
        resolve(undefined);
        return;
      }
      chunks.push(c);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
