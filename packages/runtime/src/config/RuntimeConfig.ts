import { INLINE_OUTPUT_MAX_BYTES, MCP_SERVER_SHAPE, mcpServerProblem } from '@stepforge/contract';
import { RuntimeError } from '../errors/RuntimeError.js';
import { readPolicyEnv } from '../tools/PolicyDocument.js';

/** Where the runtime is running: on AWS Lambda, or embedded in the local stack. */
export type RuntimeMode = 'aws' | 'embedded';

/** Which model provider serves steps whose model string names none (or names `default`). */
export type ProviderName = 'local' | 'openai' | 'bedrock';

/**
 * Everything a handler depends on, as plain data. Built from environment variables by
 * `runtimeConfigFromEnv`, so Lambda uses AWS defaults and the embedded stack points the same
 * code at loopback emulators by setting endpoints.
 */
export interface RuntimeConfig {
  readonly mode: RuntimeMode;
  readonly region: string;
  /** The single DynamoDB table holding runs, steps, idempotency, approvals, conversations, blobs. */
  readonly tableName: string;
  readonly endpoints: {
    readonly dynamodb?: string;
    readonly sqs?: string;
    readonly eventbridge?: string;
    readonly stepfunctions?: string;
    readonly secretsmanager?: string;
    readonly ssm?: string;
    readonly bedrock?: string;
  };
  readonly approvalQueueUrl?: string;
  readonly provider: {
    readonly default: ProviderName;
    /** False when no provider was configured at all: then every model step runs offline on the local provider. */
    readonly configured: boolean;
    readonly openaiBaseUrl: string;
    /** A literal key or a `$secret:<id>` reference. */
    readonly openaiApiKey?: string;
    /** The model id for steps that name none (or `default`), on Bedrock or the OpenAI-compatible endpoint. */
    readonly defaultModel?: string;
    /** Path to a JSON fixture of scripted responses for the local provider; echo mode without it. */
    readonly localScript?: string;
    readonly requestTimeoutMs: number;
  };
  readonly tools: {
    /** Hosts `http_fetch` may reach, and, when not empty, the only hosts connectors may reach. */
    readonly httpAllowHosts: readonly string[];
    /** Let any host name resolve to private networks and loopback (metadata and link-local addresses never). */
    readonly httpAllowPrivateNetworks?: boolean;
    readonly webSearchUrl?: string;
    readonly fsRoot: string;
    readonly fsMaxReadBytes: number;
    readonly shellEnabled: boolean;
    readonly shellAllow: readonly string[];
    readonly shellDeny: readonly string[];
    readonly maxArgsBytes: number;
  };
  readonly connectors: {
    readonly slackApiUrl: string;
    readonly slackWebhookUrl?: string;
    /** A literal token or a `$secret:<id>` reference. */
    readonly slackToken?: string;
  };
  readonly secrets: {
    readonly backend: 'env' | 'secretsmanager' | 'ssm';
    readonly file: string;
    readonly ssmPrefix: string;
    /** Seconds a secret's value is reused before it is read again (so a rotated secret is seen); 0 reads every time. */
    readonly ttlSeconds: number;
  };
  /** JSON approval policy rules (see ToolPolicy); empty = allow everything granted. */
  readonly policyRules: readonly unknown[];
  readonly userFunctionsDir: string;
  /** The interpreter that runs Python user functions (STEPFORGE_PYTHON), found on PATH. */
  readonly pythonCommand: string;
  /** Workflow name → state machine ARN, for the api and trigger handlers. */
  readonly stateMachines: Readonly<Record<string, string>>;
  /** `arn:aws:states:<region>:<account>:stateMachine:` — a workflow not in `stateMachines` is this plus its name. */
  readonly stateMachineArnPrefix?: string;
  /** MCP servers by name: `{url}` (streamable HTTP) or `{command, args}` (stdio). */
  readonly mcpServers: Readonly<Record<string, unknown>>;
  /** Step outputs whose JSON is longer than this are stored and passed by reference. */
  readonly inlineOutputMaxBytes: number;
  /** Upper bound on any envelope we accept (Step Functions caps a state payload at 256 KiB). */
  readonly maxEnvelopeBytes: number;
  /** How long an INPROGRESS idempotency lease lasts before another attempt may take it over. */
  readonly leaseSeconds: number;
  /**
   * A step body that is harmless to repeat (a model turn, a read-only or idempotent tool, MCP
   * tool or connector call, a function declared idempotent) starts before its idempotency claim,
   * which is written only if it reaches outside or is still running after this many ms; one that
   * ends sooner commits in one conditional write instead of two. 0: claim before every body
   * (STEPFORGE_CLAIM_AFTER_MS).
   */
  readonly claimAfterMs: number;
  /**
   * Embedded stack only (set by it, never from the environment): the generation of the process
   * that holds the stack, one more for each process that comes to hold it. Leases record it; a lease
   * of an earlier generation belongs to a process that has ended, so it does not wait out its time.
   */
  readonly leaseEpoch?: number;
  /** How long completed idempotency records are kept. */
  readonly idempotencyTtlSeconds: number;
  readonly approvalTimeoutSeconds: number;
  readonly logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';
  /** The clock; tests pass a fixed one. */
  readonly clock: () => number;
}

function list(v: string | undefined): string[] {
  return (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function int(env: Record<string, string | undefined>, name: string, dflt: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new RuntimeError('ConfigError', `${name} must be a non-negative number, got "${raw}"`);
  return n;
}

/** STEPFORGE_INLINE_OUTPUT_MAX_BYTES: at most the compiler's INLINE_OUTPUT_MAX_BYTES, which its payload budgets assume. */
function inlineOutputMaxBytes(env: Record<string, string | undefined>): number {
  const n = int(env, 'STEPFORGE_INLINE_OUTPUT_MAX_BYTES', INLINE_OUTPUT_MAX_BYTES);
  if (n > INLINE_OUTPUT_MAX_BYTES) {
    throw new RuntimeError(
      'ConfigError',
      `STEPFORGE_INLINE_OUTPUT_MAX_BYTES must be at most ${INLINE_OUTPUT_MAX_BYTES}, got ${n}: the compiled state machines' payload budgets assume step outputs above ${INLINE_OUTPUT_MAX_BYTES} bytes travel by reference; unset it, or lower it`,
    );
  }
  return n;
}

function oneOf<T extends string>(env: Record<string, string | undefined>, name: string, allowed: readonly T[], dflt: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new RuntimeError('ConfigError', `${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

/**
 * A JSON object from an environment variable, each member checked by `check` (which names what is
 * wrong): anything else is a ConfigError naming the variable, never an empty object in its place.
 */
function jsonObjectOf(
  env: Record<string, string | undefined>,
  name: string,
  check: (key: string, value: unknown) => string | undefined,
): Record<string, unknown> {
  const raw = env[name];
  if (raw === undefined || raw === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (e) {
    throw new RuntimeError('ConfigError', `${name} is not valid JSON: ${(e as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new RuntimeError('ConfigError', `${name} must be a JSON object, got ${JSON.stringify(parsed).slice(0, 60)}`);
  }
  for (const [k, v] of Object.entries(parsed)) {
    const problem = check(k, v);
    if (problem !== undefined) throw new RuntimeError('ConfigError', `${name}: ${problem}`);
  }
  return parsed as Record<string, unknown>;
}

/** Builds the RuntimeConfig from environment variables (see docs/runtime.md for the list). */
export function runtimeConfigFromEnv(
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<RuntimeConfig> = {},
): RuntimeConfig {
  const onLambda = env.AWS_LAMBDA_FUNCTION_NAME !== undefined;
  const mode = oneOf<RuntimeMode>(env, 'STEPFORGE_MODE', ['aws', 'embedded'], onLambda ? 'aws' : 'embedded');
  // A policy that cannot be read stops everything here, before any step: read as "no rules" it
  // would let every gated call through.
  const policyRules: unknown[] = env.STEPFORGE_POLICY ? readPolicyEnv(env.STEPFORGE_POLICY, 'STEPFORGE_POLICY') : [];
  const mcpServers = jsonObjectOf(env, 'STEPFORGE_MCP_SERVERS', (name, v) => {
    const problem = mcpServerProblem(v);
    return problem === undefined
      ? undefined
      : `server "${name}"${problem.field !== undefined ? ` field ${problem.field}` : ''}: ${problem.message}; ${MCP_SERVER_SHAPE}`;
  });
  const stateMachines = jsonObjectOf(env, 'STEPFORGE_STATE_MACHINES', (name, v) =>
    typeof v === 'string' && v.startsWith('arn:')
      ? undefined
      : `workflow "${name}" must map to a state machine ARN, got ${JSON.stringify(v)}`,
  ) as Record<string, string>;
  const cwd = process.cwd();
  const base: RuntimeConfig = {
    mode,
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
    tableName: env.STEPFORGE_TABLE ?? env.RUNS_TABLE_NAME ?? 'stepforge-runs',
    endpoints: {
      dynamodb: env.STEPFORGE_DYNAMODB_ENDPOINT,
      sqs: env.STEPFORGE_SQS_ENDPOINT,
      eventbridge: env.STEPFORGE_EVENTBRIDGE_ENDPOINT,
      stepfunctions: env.STEPFORGE_SFN_ENDPOINT,
      secretsmanager: env.STEPFORGE_SECRETSMANAGER_ENDPOINT,
      ssm: env.STEPFORGE_SSM_ENDPOINT,
      bedrock: env.STEPFORGE_BEDROCK_ENDPOINT,
    },
    approvalQueueUrl: env.STEPFORGE_APPROVAL_QUEUE_URL ?? env.APPROVAL_QUEUE_URL,
    provider: {
      default: oneOf<ProviderName>(env, 'STEPFORGE_MODEL_PROVIDER', ['local', 'openai', 'bedrock'], 'local'),
      configured: (env.STEPFORGE_MODEL_PROVIDER ?? '') !== '',
      openaiBaseUrl: env.STEPFORGE_OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
      openaiApiKey: env.STEPFORGE_OPENAI_API_KEY,
      ...(env.STEPFORGE_MODEL ? { defaultModel: env.STEPFORGE_MODEL } : {}),
      localScript: env.STEPFORGE_LOCAL_SCRIPT,
      requestTimeoutMs: int(env, 'STEPFORGE_PROVIDER_TIMEOUT_MS', 120_000),
    },
    tools: {
      httpAllowHosts: list(env.STEPFORGE_HTTP_ALLOW_HOSTS),
      httpAllowPrivateNetworks: oneOf(env, 'STEPFORGE_HTTP_ALLOW_PRIVATE_NETWORKS', ['true', 'false'], 'false') === 'true',
      webSearchUrl: env.STEPFORGE_WEB_SEARCH_URL,
      fsRoot: env.STEPFORGE_FS_ROOT ?? cwd,
      fsMaxReadBytes: int(env, 'STEPFORGE_FS_MAX_READ_BYTES', 1024 * 1024),
      shellEnabled: mode === 'embedded' && oneOf(env, 'STEPFORGE_SHELL', ['on', 'off'], 'on') === 'on',
      shellAllow: list(env.STEPFORGE_SHELL_ALLOW ?? 'ls,cat,echo,grep,wc,head,tail,pwd,date'),
      shellDeny: list(env.STEPFORGE_SHELL_DENY ?? 'rm,sudo,curl,wget,sh,bash,dd,mkfs,chmod,chown,kill'),
      maxArgsBytes: int(env, 'STEPFORGE_MAX_TOOL_ARGS_BYTES', 64 * 1024),
    },
    connectors: {
      slackApiUrl: env.STEPFORGE_SLACK_API_URL ?? 'https://slack.com/api',
      slackWebhookUrl: env.STEPFORGE_SLACK_WEBHOOK_URL,
      slackToken: env.STEPFORGE_SLACK_TOKEN,
    },
    secrets: {
      backend: oneOf(
        env,
        'STEPFORGE_SECRETS_BACKEND',
        ['env', 'secretsmanager', 'ssm'] as const,
        mode === 'aws' ? 'secretsmanager' : 'env',
      ),
      file: env.STEPFORGE_SECRETS_FILE ?? `${cwd}/.stepforge/secrets.json`,
      ssmPrefix: env.STEPFORGE_SSM_PREFIX ?? '/stepforge/',
      ttlSeconds: int(env, 'STEPFORGE_SECRETS_TTL_SECONDS', 300),
    },
    policyRules,
    mcpServers,
    stateMachines,
    stateMachineArnPrefix: env.STEPFORGE_STATE_MACHINE_ARN_PREFIX,
    userFunctionsDir: env.STEPFORGE_FUNCTIONS_DIR ?? `${cwd}/functions/user`,
    pythonCommand: env.STEPFORGE_PYTHON || 'python3',
    inlineOutputMaxBytes: inlineOutputMaxBytes(env),
    maxEnvelopeBytes: int(env, 'STEPFORGE_MAX_ENVELOPE_BYTES', 256 * 1024),
    leaseSeconds: int(env, 'STEPFORGE_LEASE_SECONDS', 900),
    claimAfterMs: int(env, 'STEPFORGE_CLAIM_AFTER_MS', 1000),
    idempotencyTtlSeconds: int(env, 'STEPFORGE_IDEMPOTENCY_TTL_SECONDS', 7 * 24 * 3600),
    approvalTimeoutSeconds: int(env, 'STEPFORGE_APPROVAL_TIMEOUT_SECONDS', 24 * 3600),
    logLevel: oneOf(env, 'STEPFORGE_LOG_LEVEL', ['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT'] as const, 'INFO'),
    clock: () => Date.now(),
  };
  return { ...base, ...overrides };
}
