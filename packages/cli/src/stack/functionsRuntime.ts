// The slice of @stepforge/functions the embedded stack uses, looked up on the package at run time.
// The runtime package is built beside this one; binding by name keeps the CLI compiling while its
// exports land, and a missing piece fails with a message that names it instead of a type error.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SFNClient } from '@aws-sdk/client-sfn';
import type { SQSClient } from '@aws-sdk/client-sqs';

/** A run record as the runtime's RunStore keeps it. */
export interface RunRecordView {
  readonly runId: string;
  readonly workflow: string;
  readonly status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';
  readonly startedAt: string;
  readonly endedAt?: string;
  readonly idempotencyKey?: string;
  readonly parentRunId?: string;
  readonly executionArn?: string;
  readonly input?: unknown;
  readonly output?: unknown;
  readonly error?: { readonly name: string; readonly message: string };
}

/** A step record as the runtime's RunStore keeps it. */
export interface StepRecordView {
  readonly runId: string;
  readonly stepId: string;
  readonly status: string;
  readonly attempts: number;
  readonly startedAt: string;
  readonly endedAt?: string;
  readonly output?: unknown;
  readonly outputRef?: string;
  readonly usage?: unknown;
  readonly error?: { readonly name: string; readonly message: string };
}

/** An approval as the runtime's ApprovalStore keeps it. */
export interface ApprovalRecordView {
  readonly approvalId: string;
  readonly runId: string;
  readonly stepId: string;
  readonly tool: string;
  readonly args: unknown;
  readonly taskToken: string;
  readonly status: 'PENDING' | 'APPROVED' | 'REJECTED' | 'TIMED_OUT';
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly decidedAt?: string;
  readonly decidedBy?: string;
  readonly reason?: string;
  readonly rule?: string;
}

/** The RunStore methods the stack calls. */
export interface RunStoreLike {
  startRun(p: { workflow: string; runId?: string; idempotencyKey?: string; parentRunId?: string; executionArn?: string; input?: unknown }): Promise<{ run: RunRecordView; reused: boolean }>;
  finishRun(runId: string, p: { status: RunRecordView['status']; output?: unknown; error?: { name: string; message: string }; executionArn?: string }): Promise<void>;
  getRun(runId: string): Promise<RunRecordView | undefined>;
  listRuns(p?: { workflow?: string; status?: RunRecordView['status']; limit?: number }): Promise<RunRecordView[]>;
  listSteps(runId: string): Promise<StepRecordView[]>;
  recordEvent(e: { runId: string; stepId?: string; type: string; detail?: unknown }): Promise<void>;
}

/** The ApprovalStore methods the stack calls. */
export interface ApprovalStoreLike {
  get(approvalId: string): Promise<ApprovalRecordView | undefined>;
  list(status?: ApprovalRecordView['status'], limit?: number): Promise<ApprovalRecordView[]>;
  decide(approvalId: string, p: { decision: 'APPROVED' | 'REJECTED' | 'TIMED_OUT'; by?: string; reason?: string }): Promise<ApprovalRecordView>;
}

/** The runtime's Db handle (single table, document client). */
export interface DbLike {
  readonly client: DynamoDBClient;
  readonly doc: { send(command: unknown): Promise<unknown> };
  readonly tableName: string;
}

/** The Runtime object: config, stores, clients. */
export interface RuntimeLike {
  readonly config: RuntimeConfigLike;
  readonly db: DbLike;
  readonly runs: RunStoreLike;
  readonly approvals: ApprovalStoreLike;
}

/** The RuntimeConfig fields the stack sets or reads (the rest pass through untouched). */
export interface RuntimeConfigLike {
  readonly mode: 'aws' | 'embedded';
  readonly region: string;
  readonly tableName: string;
  readonly endpoints: Readonly<Record<string, string | undefined>>;
  readonly approvalQueueUrl?: string;
  readonly provider: { readonly default: 'local' | 'openai' | 'bedrock'; readonly configured: boolean } & Readonly<Record<string, unknown>>;
  readonly [key: string]: unknown;
}

/** Handlers by Lambda function name (`ModelStepFunction`, …). */
export type LocalHandlers = Readonly<Record<string, (event: unknown, context: unknown) => unknown>>;

/** The functions package, as the stack binds it. */
export interface FunctionsRuntime {
  runtimeConfigFromEnv(env: Record<string, string | undefined>, overrides?: Record<string, unknown>): RuntimeConfigLike;
  createRuntime(config: RuntimeConfigLike, deps: { dynamodb?: DynamoDBClient; sqs?: SQSClient; sfn?: SFNClient; env?: Record<string, string | undefined> }): RuntimeLike;
  ensureTables(client: DynamoDBClient, tableName: string): Promise<string[]>;
  /** Absent until the runtime's handlers land; the stack then needs handlers passed in. */
  createLocalHandlers?: (configOrRuntime: RuntimeConfigLike | RuntimeLike, deps?: Record<string, unknown>) => LocalHandlers | Promise<LocalHandlers>;
  /** Decides an approval; APPROVED runs the gated tool call and answers the waiting task token. */
  resolveApproval?: (rt: RuntimeLike, approvalId: string, decision: 'APPROVED' | 'REJECTED' | 'TIMED_OUT', by?: string, reason?: string) => Promise<{ approvalId: string; status: string; result?: unknown }>;
}

let cached: Promise<FunctionsRuntime> | undefined;

/** Binds @stepforge/functions once per process. */
export function loadFunctionsRuntime(): Promise<FunctionsRuntime> {
  return (cached ??= bind());
}

async function bind(): Promise<FunctionsRuntime> {
  const mod = (await import('@stepforge/functions')) as Record<string, unknown>;
  const need = <T>(name: string): T => {
    const v = mod[name];
    if (v === undefined) {
      throw new Error(`@stepforge/functions does not export ${name} (the embedded stack needs it); rebuild with 'npm run build'`);
    }
    return v as T;
  };
  const Runtime = need<new (c: unknown, d: unknown) => RuntimeLike>('Runtime');
  const createLocalHandlers = mod.createLocalHandlers as FunctionsRuntime['createLocalHandlers'];
  const resolveApproval = mod.resolveApproval as FunctionsRuntime['resolveApproval'];
  return {
    runtimeConfigFromEnv: need('runtimeConfigFromEnv'),
    createRuntime: (config, deps) => new Runtime(config, deps),
    ensureTables: need('ensureTables'),
    ...(typeof createLocalHandlers === 'function' ? { createLocalHandlers } : {}),
    ...(typeof resolveApproval === 'function' ? { resolveApproval } : {}),
  };
}
