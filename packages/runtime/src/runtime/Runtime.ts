import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { SFNClient } from '@aws-sdk/client-sfn';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { RuntimeConfig } from '../config/RuntimeConfig.js';
import { awsClientConfig } from '../config/awsClientConfig.js';
import { createLogger } from '../logging/createLogger.js';
import { NO_TELEMETRY, type Telemetry } from '../logging/Telemetry.js';
import { ApprovalStore } from '../persistence/ApprovalStore.js';
import { BlobStore } from '../persistence/BlobStore.js';
import { WorkflowStore } from '../persistence/WorkflowStore.js';
import { ConversationStore } from '../persistence/ConversationStore.js';
import { createDb, type Db } from '../persistence/Db.js';
import { DynamoDBPersistenceLayer } from '../persistence/DynamoDBPersistenceLayer.js';
import type { BasePersistenceLayer } from '../persistence/IdempotencyRecord.js';
import { RunStore } from '../persistence/RunStore.js';
import { StepRecordPersistenceLayer } from '../persistence/StepRecordPersistenceLayer.js';
import { McpClientPool } from '../mcp/McpClientPool.js';
import { Redactor } from '../secrets/Redactor.js';
import { SecretResolver } from '../secrets/SecretResolver.js';
import { RuntimeError } from '../errors/RuntimeError.js';
import type { ToolRegistry } from '../tools/ToolDefinition.js';
import { parsePolicyRules, type PolicyRule } from '../tools/ToolPolicy.js';

/** Something that can send Step Functions task-token callbacks (an SFNClient, or the embedded engine's). */
export interface TaskTokenSender {
  send(command: unknown): Promise<unknown>;
}

/**
 * The AWS clients other than DynamoDB's, by name. The Runtime holds them but never builds one
 * itself: each is made by its own module (`sqsClient.ts`, `sfnClient.ts`, …), which the code that
 * sends to that service imports, so a Lambda bundle carries only the clients its handler's code
 * can reach.
 */
export interface AwsClients {
  readonly sqs: SQSClient;
  readonly eventbridge: EventBridgeClient;
  readonly sfn: SFNClient;
  readonly bedrock: BedrockRuntimeClient;
}

let builtinToolsOf: ((config: RuntimeConfig) => ToolRegistry) | undefined;

/**
 * Given by `tools/builtinTools.ts` when it loads, which the model and tool steps import: a handler
 * that runs neither (mcp_tool, connector, function, trigger) carries no built-in tool.
 */
export function provideBuiltinTools(make: (config: RuntimeConfig) => ToolRegistry): void {
  builtinToolsOf = make;
}

/** Something a Runtime keeps for its life and ends with it (the Python worker). */
export interface Closeable {
  close(): Promise<void> | void;
}

/** Optional injected dependencies (the embedded stack passes its own clients). */
export interface RuntimeDeps {
  readonly dynamodb?: DynamoDBClient;
  /** A client to the same DynamoDB with `cacheMiddleware` for the per-step writes (default: `dynamodb`, or one built from the config). */
  readonly dynamodbCommands?: DynamoDBClient;
  readonly sqs?: SQSClient;
  readonly eventbridge?: EventBridgeClient;
  readonly sfn?: SFNClient;
  readonly bedrock?: BedrockRuntimeClient;
  readonly tools?: ToolRegistry;
  readonly env?: Record<string, string | undefined>;
  /** Traces and metrics (default: Powertools Tracer and Metrics on Lambda, nothing elsewhere). */
  readonly telemetry?: Telemetry;
}

/**
 * Every dependency a handler uses, built once per process (per Lambda container) from one
 * RuntimeConfig. AWS clients are created lazily so a handler only pays for what it uses.
 */
export class Runtime {
  readonly config: RuntimeConfig;
  readonly redactor: Redactor;
  readonly secrets: SecretResolver;
  readonly logger: Logger;
  readonly db: Db;
  readonly runs: RunStore;
  readonly idempotency: BasePersistenceLayer;
  readonly approvals: ApprovalStore;
  readonly conversations: ConversationStore;
  readonly blobs: BlobStore;
  /** The workflows' records (WORKFLOW# items): registered by the embedded stack, written at deploy time on AWS. */
  readonly workflows: WorkflowStore;
  #tools?: ToolRegistry;
  readonly policyRules: readonly PolicyRule[];
  /** MCP clients, shared by mcp_tool steps and `mcp.<server>.<tool>` agent tools. */
  readonly mcp = new McpClientPool();
  readonly #deps: RuntimeDeps;
  readonly #clients: { -readonly [K in keyof AwsClients]?: AwsClients[K] } = {};
  readonly #kept = new Map<string, Closeable>();
  #telemetry: Telemetry;
  readonly #telemetryReady: Promise<void>;

  constructor(config: RuntimeConfig, deps: RuntimeDeps = {}) {
    this.config = config;
    this.#deps = deps;
    this.redactor = new Redactor();
    this.secrets = new SecretResolver(config, this.redactor, deps.env, (client) => this.#telemetry.captureClient(client));
    this.logger = createLogger(this.redactor, { logLevel: config.logLevel });
    const ddb = deps.dynamodb ?? new DynamoDBClient(awsClientConfig(config.region, config.endpoints.dynamodb));
    // An injected client may point anywhere, so without an injected commands client it serves both.
    const commands =
      deps.dynamodbCommands ??
      (deps.dynamodb ? ddb : new DynamoDBClient({ ...awsClientConfig(config.region, config.endpoints.dynamodb), cacheMiddleware: true }));
    this.db = createDb(ddb, config.tableName, this.redactor, config.clock, commands);
    this.runs = new RunStore(this.db);
    // Step keys keep their idempotency record on the step record; other keys use IDEM# items.
    this.idempotency = new StepRecordPersistenceLayer(this.db, new DynamoDBPersistenceLayer(this.db), this.runs);
    this.approvals = new ApprovalStore(this.db);
    this.conversations = new ConversationStore(this.db);
    this.blobs = new BlobStore(this.db);
    this.workflows = new WorkflowStore(this.db);
    this.policyRules = parsePolicyRules(config.policyRules);
    this.#telemetry = deps.telemetry ?? NO_TELEMETRY;
    const env = deps.env ?? process.env;
    if (deps.telemetry === undefined && config.mode === 'aws' && env['AWS_LAMBDA_FUNCTION_NAME']) {
      const service = env['POWERTOOLS_SERVICE_NAME'] ?? 'stepforge';
      this.#telemetryReady = import('../logging/lambdaTelemetry.js').then((m) => {
        this.#telemetry = m.lambdaTelemetry(service);
        // The clients made before it loaded are traced from now on (capturing adds a middleware).
        for (const c of [this.db.client, this.db.commands, ...Object.values(this.#clients)]) this.#telemetry.captureClient(c);
      });
    } else {
      this.#telemetryReady = Promise.resolve();
    }
  }

  /** Traces and metrics (nothing until `telemetryReady()` resolves, and off the Lambda runtime). */
  get telemetry(): Telemetry {
    return this.#telemetry;
  }

  /** Resolves once the Lambda telemetry has loaded (at once elsewhere). */
  telemetryReady(): Promise<void> {
    return this.#telemetryReady;
  }

  /** A client this Runtime made, traced when telemetry is on (an injected client is left as it is). */
  #traced<T extends object>(client: T): T {
    return this.#telemetry.captureClient(client);
  }

  /** Runs' own policies, parsed, by run id (a run's policy never changes once it is recorded). */
  readonly #runPolicies = new Map<string, readonly PolicyRule[]>();

  /**
   * The approval rules a run's tool calls are gated by: the policy its record carries (its starter
   * resolved it), else the configured one. A recorded policy that does not parse fails the call
   * (ConfigError) rather than falling back to anything looser.
   */
  async policyFor(runId: string): Promise<readonly PolicyRule[]> {
    const known = this.#runPolicies.get(runId);
    if (known) return known;
    const run = await this.runs.getRun(runId);
    const rules = run?.policy ? parsePolicyRules(run.policy.rules) : this.policyRules;
    if (this.#runPolicies.size >= 1000) this.#runPolicies.delete(this.#runPolicies.keys().next().value as string);
    this.#runPolicies.set(runId, rules);
    return rules;
  }

  /** Closes long-lived connections and processes (MCP clients, the Python worker, SDK sockets). */
  async close(): Promise<void> {
    await Promise.all([this.mcp.closeAll(), ...[...this.#kept.values()].map((k) => k.close())]);
    this.db.client.destroy();
    if (this.db.commands !== this.db.client) this.db.commands.destroy();
    for (const c of Object.values(this.#clients)) c.destroy();
  }

  /** The tools agents and tool steps call: the injected registry, else the built-in tools from the config. */
  get tools(): ToolRegistry {
    if (this.#tools) return this.#tools;
    if (!this.#deps.tools && !builtinToolsOf)
      throw new RuntimeError('ConfigError', 'this handler was built without the built-in tools: the model and tool steps use them');
    return (this.#tools = this.#deps.tools ?? builtinToolsOf!(this.config));
  }

  /**
   * What `make` builds once for this Runtime under `key` (`runtimePythonWorker(rt)`: the Python worker),
   * closed by `close()`. The injected environment is passed for it to build with.
   */
  keep<T extends Closeable>(key: string, make: (env: Record<string, string | undefined>) => T): T {
    let kept = this.#kept.get(key);
    if (!kept) this.#kept.set(key, (kept = make({ ...process.env, ...this.#deps.env })));
    return kept as T;
  }

  /**
   * The client named `name`: the injected one, else the one `make` builds from the config (traced
   * when telemetry is on), made once for this Runtime. Called through `sqsClient(rt)` and the like.
   */
  client<K extends keyof AwsClients>(name: K, make: (config: RuntimeConfig) => AwsClients[K]): AwsClients[K] {
    return (this.#clients[name] ??= this.#deps[name] ?? this.#traced(make(this.config))) as AwsClients[K];
  }
}
