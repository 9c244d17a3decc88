import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GetItemCommand, PutItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SFNClient } from '@aws-sdk/client-sfn';
import { StepforgeError, STEP_HANDLER_TABLE } from '@stepforge/contract';
import { startEngineServer, type EngineServer } from '@stepforge/engine';
import { startEmulators, type Emulators } from './startEmulators.js';
import { sqsQueueUrl } from './startSqsEmulator.js';
import { readProjectSettings } from './projectSettings.js';
import { storeState } from './storeState.js';
import { storeError } from './startDynaliteWorker.js';
import { StackRegistry, type StackEndpoints } from './StackRegistry.js';
import { isLostConnection } from './isLostConnection.js';
import { lazySqsClient } from './lazySqsClient.js';
import { IDENTITY_KEY, identityPut, nextEpochUpdate, openingEpoch, stackOpeningRequests } from './stackOpeningRequests.js';
import type * as Functions from '@stepforge/runtime';
import { loadFunctionsRuntime, type LocalHandlers, type RuntimeConfigLike, type RuntimeLike } from './functionsRuntime.js';
import { LOOPBACK_REGION as REGION, loopbackDynamoClients as dynamoClients, loopbackSfnClient as sfnClient } from './loopbackClients.js';
import { guardListener, newApiToken, newStackCredentials } from './loopbackRequestGuard.js';

/** The table and queue names the embedded stack uses (the CDK stack's are generated). */
export const EMBEDDED_TABLE = 'stepforge-runs';
export const EMBEDDED_APPROVAL_QUEUE = 'stepforge-approvals';
const ACCOUNT = '123456789012';

/**
 * How long to wait for another live process that claimed the stack to publish it. Starting the
 * stack takes ~1 s, but much longer when dozens of commands start at once on a loaded machine.
 */
const CLAIM_TIMEOUT_MS = 120_000;

/** Options of openStack. */
export interface OpenStackOptions {
  /** The project: `.stepforge/` lives here. */
  readonly projectDir: string;
  /** Keep everything in memory and never share it (tests, benchmarks). */
  readonly inMemory?: boolean;
  /** Default model provider for steps that name none (`--provider`); only the owning process applies it. */
  readonly provider?: 'local' | 'openai' | 'bedrock';
  readonly env?: Record<string, string | undefined>;
  /** Handlers to use instead of the runtime's `createLocalHandlers` (tests). */
  readonly handlers?: LocalHandlers;
  /** The user's own Lambdas by function name (`serve --lambda NAME=module`), beside the step handlers. */
  readonly userLambdas?: Readonly<Record<string, (event: unknown, context: unknown) => unknown>>;
  /** Wraps the handlers (tests count calls or force failures through this). */
  readonly wrapHandlers?: (handlers: LocalHandlers, runtime: RuntimeLike) => LocalHandlers;
  /** How long to wait for another process that is starting the stack. */
  readonly claimTimeoutMs?: number;
  /**
   * Whether a process that comes to own the stack resumes the executions an earlier one left
   * RUNNING (default true). Commands that only read pass false: they end in moments, and an
   * execution resumed there would run only until then, dispatching its current task again.
   */
  readonly resume?: boolean;
  /**
   * What the command does with the project's runs. 'read' (runs list/show, approvals list) never
   * creates nor changes a store: with none on disk yet it answers from an empty in-memory stack
   * of its own (nothing is written under .stepforge/), and it resumes nothing. 'write' (the
   * default) creates the store when there is none. Damaged store files are never opened, in
   * either mode: that is StepforgeError `store_damaged`, and the files are left as they are.
   */
  readonly access?: 'read' | 'write';
  /**
   * Whether the owner, closing the stack, first waits (up to OWNER_LINGER_MS) for the commands of
   * other processes connected to it to end (default true): each of them would otherwise take the
   * stack over, resuming every unfinished execution, one after the other. `serve` stopping does
   * not wait: its clients take the stack over.
   */
  readonly linger?: boolean;
}

/** The longest the owner waits for connected commands before it closes the stack and they take it over. */
const OWNER_LINGER_MS = 15_000;

/** A usable embedded stack: either owned by this process or a connection to the live owner. */
export interface EmbeddedStack {
  /** True when this process runs the emulators, the engine and the handlers. */
  readonly owner: boolean;
  readonly endpoints: Omit<StackEndpoints, 'pid' | 'startedAt'>;
  /** Step Functions client pointed at the engine. */
  readonly sfn: SFNClient;
  readonly runtime: RuntimeLike;
  readonly config: RuntimeConfigLike;
  /** The engine server (owner only): lets the owner wait for executions without polling. */
  readonly engine?: EngineServer;
  /** Placeholder → value, as CDK DefinitionSubstitutions would fill them. */
  readonly substitutions: Readonly<Record<string, string>>;
  /**
   * True when closing this handle shuts the stack down: this process owns it and nothing else in
   * the process holds it (a test, `serve`), so its executions stop running with this handle.
   */
  readonly lastHolder: boolean;
  /** True once close() was called on this handle: what waits on the stack through it stops waiting. */
  readonly closed: boolean;
  /**
   * The STEPFORGE_POLICY of the environment the stack was opened with (a test's, or `serve`'s),
   * for runs started through it by a caller whose own environment sets none.
   */
  readonly policyFromEnv?: string;
  /** Records where the HTTP API listens (serve), for other commands to find. */
  publishApi(apiUrl: string): void;
  close(): Promise<void>;
}

/**
 * Opens the project's embedded stack. The first process to need it owns it: dynalite (on disk
 * under `.stepforge/dynamodb`), fauxqs, the engine (executions under `.stepforge/engine`) and the
 * step handlers, all in-process on loopback; it publishes the endpoints in `.stepforge/stack.json`.
 * Every other process connects to that live stack instead, because dynalite's store can only be
 * opened once. Nothing beyond `npm ci` is needed.
 */
export async function openStack(options: OpenStackOptions): Promise<EmbeddedStack> {
  const dataDir = join(options.projectDir, '.stepforge');
  const mine = ownedHere.get(resolve(options.projectDir));
  if (mine) return borrow(mine);
  if (options.inMemory) return track(options, await ownStack(options, undefined, undefined));
  const registry = new StackRegistry(dataDir);
  const reading = options.access === 'read';
  const deadline = Date.now() + (options.claimTimeoutMs ?? CLAIM_TIMEOUT_MS);
  for (;;) {
    const live = registry.findLive();
    // An owner that is closing still has its stack.json (it is released last) but no longer answers.
    if (live && (await answers(live.sfnEndpoint))) {
      const identity = await stackIdentity(live, projectKey(dataDir));
      if (identity.verdict === 'ours') return connectStack(options, live, registry, identity.clients);
      // Something else answers where stack.json points (its process ended; the pid and the port
      // went to others): nothing is read from it, and the stale claim gives way to a fresh stack.
      if (identity.verdict === 'foreign') {
        registry.discardStale(live);
        continue;
      }
    }
    // Nothing recorded yet and nobody to ask: an empty stack of this command's own, untracked (a
    // later command in this process that writes opens the real one) and unpublished.
    if (!live && reading && storeState(join(dataDir, 'dynamodb')).kind === 'absent')
      return ownStack({ ...options, resume: false }, undefined, undefined);
    if (!live && registry.tryClaim()) {
      // A command that only reads works on a copy of the store, taken while the claim keeps
      // every other process from opening it: LevelDB opens a store read-write, and each open
      // rewrites its log into a table and may compact (reading, and failing on, every table),
      // so reading the real one would write to it. The claim is given up once the copy is open.
      if (reading) {
        try {
          return await ownSnapshot(options, dataDir);
        } finally {
          registry.release();
        }
      }
      try {
        return track(options, await ownStack(options, dataDir, registry));
      } catch (e) {
        registry.release();
        throw e;
      }
    }
    // A claimer that is still alive is starting the stack (slowly, on a loaded machine): it
    // publishes or ends, and a lock whose process ended is broken by the next tryClaim.
    if (Date.now() > deadline) {
      const holder = registry.lockHolder();
      throw new StepforgeError(
        'stack_in_use',
        `stepforge process ${holder ?? '?'} claimed this project's stack (${join(dataDir, 'stack.lock')}) but has not published it in ${Math.round((options.claimTimeoutMs ?? CLAIM_TIMEOUT_MS) / 1000)} s`,
        {
          hint: `that process is still running: let it finish (or end it), then run the command again; the lock is taken over by itself once the process has ended`,
          details: { pid: holder ?? null },
        },
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Stacks this process owns, by project directory. A second openStack in the same process (a test
 * driving several commands through main(), or `serve` handling a request) shares the running stack
 * instead of opening the same dynalite store twice; the last close() shuts it down.
 */
const ownedHere = new Map<string, Slot>();

interface Slot {
  readonly key: string;
  readonly stack: EmbeddedStack;
  refs: number;
  /** Shut down for every holder at once (closeOwnedStack). */
  shut?: boolean;
}

/**
 * Shuts down the stack this process owns for `projectDir` now, whatever else in the process still
 * holds it: every handle on it then reads as closed, so what waits through one stops waiting.
 * `serve` stops this way: the commands it runs for thin clients (a `run` waiting for an approval)
 * would otherwise keep the stack, and serve's process, up after Ctrl-C until they ended.
 */
export async function closeOwnedStack(projectDir: string): Promise<void> {
  const slot = ownedHere.get(resolve(projectDir));
  if (!slot) return;
  slot.shut = true;
  ownedHere.delete(slot.key);
  await slot.stack.close();
}

function track(options: OpenStackOptions, stack: EmbeddedStack): EmbeddedStack {
  const slot: Slot = { key: resolve(options.projectDir), stack, refs: 0 };
  ownedHere.set(slot.key, slot);
  return borrow(slot);
}

function borrow(slot: Slot): EmbeddedStack {
  slot.refs++;
  let closed = false;
  // The stack's properties are read through it (not copied): what it builds on first use (its
  // Step Functions client) is built once, when a holder first needs it.
  return Object.create(slot.stack, {
    lastHolder: { get: () => !closed && slot.refs === 1, enumerable: true },
    closed: { get: () => closed || slot.shut === true, enumerable: true },
    close: {
      enumerable: true,
      value: async () => {
        if (closed) return;
        closed = true;
        if (--slot.refs > 0) return;
        if (ownedHere.get(slot.key) === slot) ownedHere.delete(slot.key);
        await slot.stack.close();
      },
    },
  }) as EmbeddedStack;
}

function policyFromEnvOf(options: OpenStackOptions): { policyFromEnv?: string } {
  const v = (options.env ?? process.env).STEPFORGE_POLICY;
  return v ? { policyFromEnv: v } : {};
}

/** The project a stack belongs to, as its identity records it: the real path of its `.stepforge` folder. */
function projectKey(dataDir: string): string {
  try {
    return realpathSync(dataDir);
  } catch {
    return resolve(dataDir);
  }
}

/**
 * Whether the endpoints stack.json names are that stack's: its DynamoDB endpoint must answer the
 * `stackId` the file records, and the project (the real path of its `.stepforge`) must be this
 * one. A pid that is alive proves nothing (pids are reused), nor does a port that answers.
 * `foreign`: something answered, and not with that identity (another project's stack, a
 * stack.json copied from another project, any other server); `unreachable`: nothing answered in time (an owner busy or closing: wait).
 * A stack.json of an owner that records no identity (an earlier version) is taken as it is. The
 * question is signed with the stack's credentials, as every request to its services must be.
 * `ours` comes with the clients that asked, when there were credentials to ask with: the connection
 * goes on with them (their connection made, their endpoint resolved) rather than building two more.
 */
async function stackIdentity(
  live: StackEndpoints,
  project: string,
): Promise<{ readonly verdict: 'ours'; readonly clients?: LoopbackDynamo } | { readonly verdict: 'foreign' | 'unreachable' }> {
  const credentials = live.credentials as StackEndpoints['credentials'] | undefined;
  // Without an id or credentials to ask with, connectStack says what is missing.
  if (live.stackId === undefined || typeof credentials?.accessKeyId !== 'string' || typeof credentials.secretAccessKey !== 'string')
    return { verdict: 'ours' };
  const clients = dynamoClients(live.dynamodbEndpoint, credentials);
  const { dynamodb, dynamodbCommands } = clients;
  let kept = false;
  try {
    const r = await dynamodb.send(new GetItemCommand({ TableName: EMBEDDED_TABLE, Key: IDENTITY_KEY, ConsistentRead: true }), {
      abortSignal: AbortSignal.timeout(5000),
    });
    if (r.Item?.stackId?.S !== live.stackId) return { verdict: 'foreign' };
    // The stack of another project, whose stack.json was copied here: its runs are not this
    // project's, nor is its store the place for this project's runs. (An owner of an earlier
    // version records no project.)
    const owner = r.Item?.project?.S;
    if (owner !== undefined && owner !== project) return { verdict: 'foreign' };
    kept = true;
    return { verdict: 'ours', clients };
  } catch (e) {
    const name = (e as { name?: string }).name;
    if (isLostConnection(e) || name === 'AbortError' || name === 'TimeoutError') return { verdict: 'unreachable' };
    return { verdict: 'foreign' };
  } finally {
    if (!kept) {
      dynamodb.destroy();
      dynamodbCommands.destroy();
    }
  }
}

/** The DynamoDB clients of a process that connects to the stack (loopbackClients.ts). */
type LoopbackDynamo = ReturnType<typeof dynamoClients>;

/**
 * Waits while processes are attached to this owner's stack as clients (a `run` started while this
 * one ran, following its run here), up to OWNER_LINGER_MS: closing under them would have each take
 * the stack over in turn, and a request of theirs in flight would meet a closed store.
 */
async function lingerForClients(registry: StackRegistry): Promise<void> {
  const since = Date.now();
  let noted = false;
  for (
    let clients = registry.attachedClients();
    clients.length > 0 && Date.now() - since < OWNER_LINGER_MS;
    clients = registry.attachedClients()
  ) {
    if (!noted && Date.now() - since > 1000) {
      noted = true;
      process.stderr.write(
        `note: waiting for ${clients.length} stepforge command(s) using this project's stack (pid ${clients.join(', ')}) to end, at most ${OWNER_LINGER_MS / 1000} s; after that they carry on without this process\n`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Whether something accepts connections at `url` (a loopback endpoint), within a second. */
function answers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function substitutionsFor(tableName: string, approvalQueueUrl: string): Record<string, string> {
  const subs: Record<string, string> = { RunsTableName: tableName, ApprovalQueueUrl: approvalQueueUrl };
  for (const h of STEP_HANDLER_TABLE) subs[h.placeholder] = `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${h.functionName}`;
  return subs;
}

function runtimeConfig(
  fr: Awaited<ReturnType<typeof loadFunctionsRuntime>>,
  options: OpenStackOptions,
  endpoints: { dynamodb: string; sqs: string; stepfunctions: string },
  approvalQueueUrl: string,
  leaseEpoch: number | undefined,
): RuntimeConfigLike {
  // Handler logs at INFO would interleave with the progress display and `--json` on stdout; the
  // run records and the history carry the same facts. STEPFORGE_LOG_LEVEL still wins.
  const env: Record<string, string | undefined> = { ...(options.env ?? process.env) };
  if (!env.STEPFORGE_LOG_LEVEL) env.STEPFORGE_LOG_LEVEL = 'WARN';
  // The approval policy is the workflow's (resolvePolicy, read when a workflow is registered and
  // recorded on each run), not this process's: a command that starts nothing never reads it.
  delete env.STEPFORGE_POLICY;
  const base = namedConfigError(() => fr.runtimeConfigFromEnv({ ...env, STEPFORGE_MODE: 'embedded' }));
  const provider = options.provider ? { ...base.provider, default: options.provider, configured: true } : base.provider;
  const settings = readProjectSettings(options.projectDir);
  return namedConfigError(() =>
    fr.runtimeConfigFromEnv(
      { ...env, STEPFORGE_MODE: 'embedded' },
      {
        // The project's servers, and STEPFORGE_MCP_SERVERS over them (a setting of this one run).
        mcpServers: { ...(settings.mcpServers ?? {}), ...base.mcpServers },
        // Only for a run whose record carries no policy (one started before runs recorded theirs):
        // nothing says what gates it, so each of its tool calls asks a human rather than running unasked.
        policyRules: [{ name: 'this run recorded no approval policy: each tool call asks', tool: '*', action: 'approve' }],
        tableName: EMBEDDED_TABLE,
        region: REGION,
        endpoints: { ...base.endpoints, ...endpoints },
        approvalQueueUrl,
        provider,
        tools: {
          ...base.tools,
          fsRoot: env.STEPFORGE_FS_ROOT ?? options.projectDir,
          // The project's allow-list with STEPFORGE_HTTP_ALLOW_HOSTS; private networks when either allows them.
          httpAllowHosts: [...(settings.http?.allowHosts ?? []), ...base.tools.httpAllowHosts],
          httpAllowPrivateNetworks: (base.tools.httpAllowPrivateNetworks ?? false) || settings.http?.allowPrivateNetworks === true,
        },
        secrets: { ...base.secrets, file: env.STEPFORGE_SECRETS_FILE ?? join(options.projectDir, '.stepforge', 'secrets.json') },
        userFunctionsDir: env.STEPFORGE_FUNCTIONS_DIR ?? join(options.projectDir, 'functions', 'user'),
        ...(leaseEpoch !== undefined ? { leaseEpoch } : {}),
      },
    ),
  );
}

/**
 * The next generation of the stack's owner (RuntimeConfig.leaseEpoch): one atomic counter in the
 * table, incremented by each process that comes to own the stack, so the step leases left by any
 * earlier owner (a process that has ended) are known as such.
 */
async function nextLeaseEpoch(client: DynamoDBClient): Promise<number> {
  const r = await client.send(new UpdateItemCommand(nextEpochUpdate(EMBEDDED_TABLE)));
  return Number(r.Attributes?.epoch?.N ?? 1);
}

/**
 * The runtime's configuration errors (a variable out of range, a JSON variable that is not JSON)
 * as the named error the CLI prints, rather than an internal one.
 */
function namedConfigError<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if ((e as { name?: unknown }).name !== 'ConfigError') throw e;
    throw new StepforgeError('invalid_config', (e as Error).message, {
      hint: 'fix or unset that environment variable (docs/runtime.md lists them); nothing ran',
    });
  }
}

/**
 * How long the engine keeps ended executions under `.stepforge/engine`: STEPFORGE_EXECUTION_RETENTION_DAYS
 * (default 90, as Step Functions keeps a closed Standard execution's history; 0 keeps them for
 * good). The run records in DynamoDB are kept either way; an older run shows no history.
 */
export function executionRetentionMs(env: Readonly<Record<string, string | undefined>>): number | undefined {
  const raw = env.STEPFORGE_EXECUTION_RETENTION_DAYS;
  if (raw === undefined || raw === '') return undefined;
  const days = Number(raw);
  if (!Number.isFinite(days) || days < 0) {
    throw new StepforgeError('invalid_config', `STEPFORGE_EXECUTION_RETENTION_DAYS must be a number of days, 0 or more, got '${raw}'`, {
      hint: 'unset it for the default (90 days), or set 0 to keep ended executions for good',
    });
  }
  return days * 24 * 3600 * 1000;
}

/**
 * A stack of this command's own over a copy of the project's run store (in a private temporary
 * folder, removed on close), with the engine reading `.stepforge/engine` without writing to it:
 * whatever the command does, the project's files stay as they are. A damaged store is refused
 * before anything is copied or opened.
 */
async function ownSnapshot(options: OpenStackOptions, dataDir: string): Promise<EmbeddedStack> {
  const store = join(dataDir, 'dynamodb');
  const state = storeState(store);
  if (state.kind === 'damaged') throw storeError('store_damaged', `the run store in ${store} cannot be opened: ${state.reason}`);
  const snapshot = mkdtempSync(join(tmpdir(), 'stepforge-read-'));
  try {
    // LevelDB's lock and info logs are its process's own, not data.
    cpSync(store, join(snapshot, 'dynamodb'), { recursive: true, filter: (src) => !/[\\/](LOCK|LOG|LOG\.old)$/.test(src) });
    return await ownStack({ ...options, resume: false, access: 'read' }, dataDir, undefined, snapshot);
  } catch (e) {
    rmSync(snapshot, { recursive: true, force: true });
    throw e;
  }
}

/**
 * Starts the stack in this process. With `snapshot`, dynalite opens the store copied there and the
 * engine only reads `dataDir/engine` (ownSnapshot); the copy is removed when the stack closes.
 */
async function ownStack(
  options: OpenStackOptions,
  dataDir: string | undefined,
  registry: StackRegistry | undefined,
  snapshot?: string,
): Promise<EmbeddedStack> {
  const retentionMs = executionRetentionMs(options.env ?? process.env);
  // Loading the runtime package and starting the emulators are both slow; do them side by side.
  // The stack's secret, new for each owner: only a process that can read stack.json reaches it.
  const credentials = newStackCredentials();
  const apiToken = newApiToken();
  // This stack's identity, answered by its DynamoDB endpoint: a process that finds stack.json
  // checks it there before it trusts the endpoints (see stackIdentity).
  const stackId = randomUUID();
  const project = dataDir ? projectKey(dataDir) : undefined;
  const [frResult, emuResult] = await Promise.allSettled([
    loadFunctionsRuntime(),
    startEmulators({
      ...(dataDir ? { dataDir: snapshot ?? dataDir, access: options.access ?? 'write' } : {}),
      credentials,
      prepare: stackOpeningRequests(EMBEDDED_TABLE, stackId, project),
      queues: [EMBEDDED_APPROVAL_QUEUE],
    }),
  ]);
  if (frResult.status === 'rejected') {
    if (emuResult.status === 'fulfilled') await emuResult.value.close();
    throw frResult.reason;
  }
  if (emuResult.status === 'rejected') throw emuResult.reason;
  const fr = frResult.value;
  const emulators: Emulators = emuResult.value;
  const closers: (() => Promise<void>)[] = [() => emulators.close()];
  if (snapshot !== undefined) closers.push(async () => rmSync(snapshot, { recursive: true, force: true }));
  try {
    // This process runs dynalite's worker: its own clients talk to it over private ports, not HTTP.
    const { dynamodb, dynamodbCommands } = dynamoClients(emulators.dynamodbEndpoint, credentials, () => emulators.connectDynamodb());
    // Built on its first message: only approvals and the `sqs` connector send to SQS, and most runs do neither.
    const sqs = lazySqsClient(emulators.sqsEndpoint, REGION, credentials);
    closers.unshift(async () => {
      dynamodb.destroy();
      dynamodbCommands.destroy();
      sqs.destroy();
    });
    // The table and the engine's server depend on nothing of each other: dynalite's thread opens
    // the store and answers the stack's opening requests while this one starts the engine, side
    // by side, not one after another.
    const tableReady = (async () => {
      // The store's own failure (damaged, held by another process), rather than a request's.
      const opened = openingEpoch(await emulators.dynamodbOpened);
      if (opened !== undefined) return opened;
      // No table there yet (a new store), or not ready: created (a store this process has just
      // created is known to hold none), then the two writes, side by side, through the client
      // whose item operations go to the worker as plain JSON.
      await fr.ensureTables(dynamodb, EMBEDDED_TABLE, { absent: emulators.dynamodbCreated });
      const [epoch] = await Promise.all([
        nextLeaseEpoch(dynamodbCommands),
        dynamodbCommands.send(new PutItemCommand(identityPut(EMBEDDED_TABLE, stackId, project))),
      ]);
      return epoch;
    })();
    // The approval queue exists from the SQS emulator's first request on (startSqsEmulator): a run
    // that sends no message never loads the emulator.
    const approvalQueueUrl = emulators.sqsQueueUrl(EMBEDDED_APPROVAL_QUEUE);
    const substitutions = substitutionsFor(EMBEDDED_TABLE, approvalQueueUrl);

    // The handlers need the engine's endpoint (task-token callbacks) and the engine needs the
    // handlers: bind them through a table that is filled once both exist.
    const table: Record<string, (event: unknown, context: unknown) => unknown> = {};
    const handlers: Record<string, (event: unknown, context: unknown) => unknown> = {};
    for (const { functionName: fn } of STEP_HANDLER_TABLE) {
      handlers[fn] = (event, context) => {
        const h = table[fn];
        if (!h) throw Object.assign(new Error(`no local handler for ${fn}`), { name: 'Lambda.ResourceNotFoundException' });
        return h(event, context);
      };
    }
    const [tableResult, engineResult] = await Promise.allSettled([
      tableReady,
      startEngineServer({
        handlers: { ...options.userLambdas, ...handlers },
        substitutions,
        sqsEndpoint: emulators.sqsEndpoint,
        dynamodbEndpoint: emulators.dynamodbEndpoint,
        region: REGION,
        account: ACCOUNT,
        credentials,
        requestGuard: (listener) => guardListener(listener, { credentials }),
        ...(dataDir
          ? {
              dataDir: join(dataDir, 'engine'),
              ...(retentionMs !== undefined ? { executionRetentionMs: retentionMs } : {}),
              ...(snapshot !== undefined ? { readOnlyDataDir: true } : {}),
            }
          : {}),
        // The handler table is filled below, once the runtime exists: executions left unfinished by a
        // previous process resume only after that, so none can call a handler that is not there yet.
        resumeOnStart: false,
      }),
    ]);
    // An engine that started is closed with the rest when the table failed (the catch below).
    const engineCloser = async () => {
      if (engineResult.status === 'fulfilled') await engineResult.value.close();
    };
    closers.unshift(engineCloser);
    if (tableResult.status === 'rejected') throw tableResult.reason;
    if (engineResult.status === 'rejected') throw engineResult.reason;
    const leaseEpoch = tableResult.value;
    const engine = engineResult.value;
    // Built when first used: the owner registers workflows and starts and waits for executions in
    // process (engineStateMachines, engineExecutions), so a `run` may never send the engine a request.
    let sfn: SFNClient | undefined;
    const sfnOf = () => (sfn ??= sfnClient(engine.url, credentials));
    closers.unshift(async () => sfn?.destroy());
    const config = runtimeConfig(
      fr,
      options,
      { dynamodb: emulators.dynamodbEndpoint, sqs: emulators.sqsEndpoint, stepfunctions: engine.url },
      approvalQueueUrl,
      leaseEpoch,
    );
    const runtime = new fr.Runtime(config, {
      dynamodb,
      dynamodbCommands,
      sqs,
      // Read by the Runtime when a handler first needs the client (Runtime.client), not before.
      get sfn() {
        return sfnOf();
      },
      ...(options.env ? { env: options.env } : {}),
    });
    // After the engine (closed first, so no step is still calling), before the clients the runtime shares:
    // the processes it started (the Python worker, stdio MCP servers) end with the stack.
    closers.splice(closers.indexOf(engineCloser) + 1, 0, () => runtime.close());
    const local: LocalHandlers = options.handlers ?? fr.createLocalHandlers(runtime).handlers;
    Object.assign(table, options.wrapHandlers ? options.wrapHandlers(local, runtime) : local);
    if (options.resume !== false && options.access !== 'read') engine.resumeUnfinished();
    if (options.access !== 'read')
      closers.splice(
        closers.indexOf(engineCloser),
        0,
        expireApprovalsEvery(APPROVAL_EXPIRY_MS, () => fr.expireDueApprovals(runtime)),
      );

    const endpoints = {
      dynamodbEndpoint: emulators.dynamodbEndpoint,
      sqsEndpoint: emulators.sqsEndpoint,
      sfnEndpoint: engine.url,
      leaseEpoch,
      credentials,
      apiToken,
      stackId,
    };
    registry?.publish(endpoints);
    let closed = false;
    return {
      owner: true,
      ...policyFromEnvOf(options),
      lastHolder: true,
      get closed() {
        return closed;
      },
      endpoints,
      get sfn() {
        return sfnOf();
      },
      runtime,
      config,
      engine,
      substitutions,
      publishApi(apiUrl) {
        registry?.publish({ ...endpoints, apiUrl });
      },
      async close() {
        if (closed) return;
        closed = true;
        if (registry && options.linger !== false) await lingerForClients(registry);
        for (const c of closers) await c().catch(() => undefined);
        // Last, once dynalite has closed its store: a process that claims the stack next opens it.
        registry?.release();
      },
    };
  } catch (e) {
    for (const c of closers) await c().catch(() => undefined);
    throw e;
  }
}

/** How often the stack's owner denies the approvals past their deadline. */
const APPROVAL_EXPIRY_MS = 1000;

/**
 * Runs `expire` every `ms` while the stack is open: approvals past their deadline are denied, as an
 * EventBridge schedule does on AWS. Only the owner runs it (one process, whoever started the run or
 * `serve`), one pass at a time; the timer never keeps the process alive. Returns its closer.
 */
function expireApprovalsEvery(ms: number, expire: () => Promise<unknown>): () => Promise<void> {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    // A pass that fails (the store closing under it) is tried again at the next tick.
    running ??= expire()
      .catch(() => undefined)
      .finally(() => {
        running = undefined;
      });
  }, ms);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

async function connectStack(
  options: OpenStackOptions,
  live: StackEndpoints,
  registry: StackRegistry,
  clients?: LoopbackDynamo,
): Promise<EmbeddedStack> {
  const credentials = live.credentials as StackEndpoints['credentials'] | undefined;
  if (typeof credentials?.accessKeyId !== 'string' || typeof credentials.secretAccessKey !== 'string') {
    throw new StepforgeError(
      'stack_credentials_missing',
      `the stepforge process (pid ${live.pid}) that holds this project's stack published no credentials in .stepforge/stack.json, so its services cannot be reached`,
      {
        hint: 'it is an older stepforge: end it (or wait for it to end), then run the command again',
      },
    );
  }
  const fr = await loadFunctionsRuntime().catch((e: unknown) => {
    clients?.dynamodb.destroy();
    clients?.dynamodbCommands.destroy();
    throw e;
  });
  const detach = registry.attach();
  const { dynamodb, dynamodbCommands } = clients ?? dynamoClients(live.dynamodbEndpoint, credentials);
  // Built on its first message, as the owner's (ownStack).
  const sqs = lazySqsClient(live.sqsEndpoint, REGION, credentials);
  const sfn = sfnClient(live.sfnEndpoint, credentials);
  const approvalQueueUrl = sqsQueueUrl(live.sqsEndpoint, EMBEDDED_APPROVAL_QUEUE);
  const config = runtimeConfig(
    fr,
    options,
    { dynamodb: live.dynamodbEndpoint, sqs: live.sqsEndpoint, stepfunctions: live.sfnEndpoint },
    approvalQueueUrl,
    live.leaseEpoch,
  );
  const runtime = new fr.Runtime(config, {
    dynamodb,
    dynamodbCommands,
    sqs,
    sfn,
  });
  const { pid: _pid, startedAt: _s, ...endpoints } = live;
  let closed = false;
  return {
    owner: false,
    ...policyFromEnvOf(options),
    lastHolder: false,
    get closed() {
      return closed;
    },
    endpoints,
    sfn,
    runtime,
    config,
    substitutions: substitutionsFor(EMBEDDED_TABLE, approvalQueueUrl),
    publishApi() {
      // Only the owner publishes.
    },
    async close() {
      closed = true;
      detach();
      // Whatever this runtime started itself (an MCP client, the Python worker) ends with the handle.
      await runtime.close().catch(() => undefined);
      dynamodb.destroy();
      dynamodbCommands.destroy();
      sqs.destroy();
      sfn.destroy();
    },
  };
}
