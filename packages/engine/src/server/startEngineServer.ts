import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DirectoryExecutionStore } from '../executions/DirectoryExecutionStore.js';
import { ExecutionManager, type ExecuteFn, type ValidateFn } from '../executions/ExecutionManager.js';
import type { Clock, TaskInvoker } from '../interpreter/types.js';
import { isLoopbackHostname, localRequestRefusal } from './localRequestRefusal.js';
import { createProtocolHandler, type Operation } from './awsJsonProtocol.js';
import { defaultEngine, type LambdaHandlers } from './defaultEngine.js';
import { withoutSyncPrefix } from './syncHost.js';

/** Options of the embedded Step Functions API server. */
export interface EngineServerOptions {
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** Default 127.0.0.1: the server is for this machine only. */
  readonly host?: string;
  /** Persist state machines, executions, histories and checkpoints here; in memory when omitted. */
  readonly dataDir?: string;
  /** With `dataDir`: how long ended executions are kept (DirectoryExecutionStore; default 90 days, 0 for good). */
  readonly executionRetentionMs?: number;
  /** With `dataDir`: read what is there and write nothing to it (a command that only reads runs). */
  readonly readOnlyDataDir?: boolean;
  /** Lambda handlers by function name or ARN. */
  readonly handlers?: LambdaHandlers;
  /** `${Name}` → value for every definition (CDK DefinitionSubstitutions). */
  readonly substitutions?: Readonly<Record<string, string>>;
  readonly sqsEndpoint?: string;
  readonly dynamodbEndpoint?: string;
  readonly region?: string;
  readonly account?: string;
  readonly partition?: string;
  readonly clock?: Clock;
  /** The draw that splits an alias's executions between its versions (default Math.random; tests pin it). */
  readonly random?: () => number;
  /** Override the interpreter (tests). */
  readonly execute?: ExecuteFn;
  readonly validate?: ValidateFn;
  /** Override the Lambda invoker built from `handlers`. */
  readonly lambda?: TaskInvoker;
  /**
   * Resume unfinished executions from `dataDir` at start-up (default true). Pass false when the
   * handlers are wired up after the server starts, then call `resumeUnfinished()` once they are.
   */
  readonly resumeOnStart?: boolean;
  /**
   * Credentials for the SQS and DynamoDB endpoints the engine's service integrations call (the
   * emulators of an embedded stack verify them); dummy ones when omitted.
   */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /**
   * Wraps the server's request listener, to authenticate requests before the API sees them (the
   * embedded stack's loopback guard: no browsers, SigV4 signatures by the stack's credentials).
   * Without it, loopback servers refuse foreign Host and Origin headers (localRequestRefusal).
   */
  readonly requestGuard?: (listener: RequestListener) => RequestListener;
}

/** A running server. */
export interface EngineServer {
  /**
   * `http://127.0.0.1:<port>`: point `@aws-sdk/client-sfn` here; for StartSyncExecution, with
   * `disableHostPrefix: true` or an agent using `syncHostLookup` (syncHost.ts says why).
   */
  readonly url: string;
  readonly port: number;
  readonly manager: ExecutionManager;
  /** How many unfinished executions were resumed from the data directory at start-up. */
  readonly resumed: number;
  /** Resumes unfinished executions now (with `resumeOnStart: false`); returns how many. */
  resumeUnfinished(): number;
  /** Stops listening; running Standard executions stay RUNNING in the data directory and resume next time. */
  close(): Promise<void>;
}

/** The operations this server speaks, by X-Amz-Target name. */
export const SUPPORTED_OPERATIONS = [
  'CreateStateMachine',
  'UpdateStateMachine',
  'DescribeStateMachine',
  'ListStateMachines',
  'DeleteStateMachine',
  'StartExecution',
  'StartSyncExecution',
  'DescribeExecution',
  'ListExecutions',
  'GetExecutionHistory',
  'StopExecution',
  'RedriveExecution',
  'SendTaskSuccess',
  'SendTaskFailure',
  'SendTaskHeartbeat',
  'DescribeStateMachineForExecution',
  'ValidateStateMachineDefinition',
  'TestState',
  'PublishStateMachineVersion',
  'ListStateMachineVersions',
  'DeleteStateMachineVersion',
  'CreateStateMachineAlias',
  'DescribeStateMachineAlias',
  'UpdateStateMachineAlias',
  'DeleteStateMachineAlias',
  'ListStateMachineAliases',
  'TagResource',
  'UntagResource',
  'ListTagsForResource',
  'ListMapRuns',
  'DescribeMapRun',
  'UpdateMapRun',
] as const;

/**
 * Empty history files the store keeps made ahead (DirectoryExecutionStore's `spareFiles`): enough
 * for the executions that start while one is being made, at a few hundred starts a second.
 */
const SPARE_HISTORY_FILES = 16;

/**
 * Starts the embedded Step Functions API (AWS JSON 1.0) on loopback, backed by the executions
 * manager and the in-process interpreter. With `dataDir`, unfinished Standard executions from a
 * previous run resume at once.
 */
export async function startEngineServer(options: EngineServerOptions = {}): Promise<EngineServer> {
  const engine = await defaultEngine(options.handlers);
  const region = options.region ?? 'us-east-1';
  const manager = new ExecutionManager({
    execute: options.execute ?? engine.execute,
    validate: options.validate ?? engine.validate,
    ...((options.lambda ?? engine.lambda) ? { lambda: options.lambda ?? engine.lambda } : {}),
    ...(options.dataDir !== undefined
      ? {
          store: new DirectoryExecutionStore(
            options.dataDir,
            options.executionRetentionMs !== undefined ? { ms: options.executionRetentionMs } : {},
            { readOnly: options.readOnlyDataDir === true, spareFiles: SPARE_HISTORY_FILES },
          ),
        }
      : {}),
    ...(options.substitutions ? { substitutions: options.substitutions } : {}),
    sqs: {
      ...(options.sqsEndpoint !== undefined ? { endpoint: options.sqsEndpoint } : {}),
      region,
      ...(options.credentials ? { credentials: options.credentials } : {}),
    },
    dynamodb: {
      ...(options.dynamodbEndpoint !== undefined ? { endpoint: options.dynamodbEndpoint } : {}),
      region,
      ...(options.credentials ? { credentials: options.credentials } : {}),
    },
    region,
    ...(options.account !== undefined ? { account: options.account } : {}),
    ...(options.partition !== undefined ? { partition: options.partition } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.random ? { random: options.random } : {}),
  });
  manager.load();
  const resumed = options.resumeOnStart === false ? 0 : manager.resumeUnfinished();
  const operations: Record<(typeof SUPPORTED_OPERATIONS)[number], Operation> = {
    CreateStateMachine: (r) => manager.createStateMachine(r),
    UpdateStateMachine: (r) => manager.updateStateMachine(r),
    DescribeStateMachine: (r) => manager.describeStateMachine(r),
    ListStateMachines: (r) => manager.listStateMachines(r),
    DeleteStateMachine: (r) => manager.deleteStateMachine(r),
    StartExecution: (r) => manager.startExecution(r),
    StartSyncExecution: (r) => manager.startSyncExecution(r),
    DescribeExecution: (r) => manager.describeExecution(r),
    ListExecutions: (r) => manager.listExecutions(r),
    GetExecutionHistory: (r) => manager.getExecutionHistory(r),
    StopExecution: (r) => manager.stopExecution(r),
    RedriveExecution: (r) => manager.redriveExecution(r),
    SendTaskSuccess: (r) => manager.sendTaskSuccess(r),
    SendTaskFailure: (r) => manager.sendTaskFailure(r),
    SendTaskHeartbeat: (r) => manager.sendTaskHeartbeat(r),
    DescribeStateMachineForExecution: (r) => manager.describeStateMachineForExecution(r),
    ValidateStateMachineDefinition: (r) => manager.validateStateMachineDefinition(r),
    TestState: (r) => manager.testState(r),
    PublishStateMachineVersion: (r) => manager.publishStateMachineVersion(r),
    ListStateMachineVersions: (r) => manager.listStateMachineVersions(r),
    DeleteStateMachineVersion: (r) => manager.deleteStateMachineVersion(r),
    CreateStateMachineAlias: (r) => manager.createStateMachineAlias(r),
    DescribeStateMachineAlias: (r) => manager.describeStateMachineAlias(r),
    UpdateStateMachineAlias: (r) => manager.updateStateMachineAlias(r),
    DeleteStateMachineAlias: (r) => manager.deleteStateMachineAlias(r),
    ListStateMachineAliases: (r) => manager.listStateMachineAliases(r),
    TagResource: (r) => manager.tagResource(r),
    UntagResource: (r) => manager.untagResource(r),
    ListTagsForResource: (r) => manager.listTagsForResource(r),
    ListMapRuns: (r) => manager.listMapRuns(r),
    DescribeMapRun: (r) => manager.describeMapRun(r),
    UpdateMapRun: (r) => manager.updateMapRun(r),
  };
  const handle = createProtocolHandler(operations);
  // On loopback, refuse what a web page sends through the user's browser (localRequestRefusal); a
  // server the caller put on another address is meant to be reached by other names.
  const guarded = isLoopbackHostname(options.host ?? '127.0.0.1');
  const listener: RequestListener = (req, res) => {
    // `sync-127.0.0.1` is the Host StartSyncExecution arrives with (syncHost.ts): loopback too.
    const refusal = guarded ? localRequestRefusal({ ...req.headers, host: withoutSyncPrefix(req.headers.host) }) : undefined;
    if (refusal === undefined) return handle(req, res);
    res.writeHead(403, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-errortype': 'AccessDeniedException', connection: 'close' });
    res.end(JSON.stringify({ __type: 'AccessDeniedException', message: refusal.message }));
    req.resume();
  };
  const server = createServer(options.requestGuard ? options.requestGuard(listener) : listener);
  // Long-polling SDK clients keep sockets alive; do not let them hold close() hostage.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    manager,
    resumed,
    resumeUnfinished: () => manager.resumeUnfinished(),
    async close() {
      await manager.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
