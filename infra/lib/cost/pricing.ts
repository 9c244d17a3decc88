// us-east-1 list prices and the per-run assumptions the cost report uses. Every figure the report
// prints comes from these constants, so the assumptions are visible in one place (and in the output).

/** us-east-1 on-demand list prices (USD). */
export const US_EAST_1 = {
  /** Step Functions Standard: $0.025 per 1,000 state transitions. */
  standardPerTransition: 0.025 / 1000,
  /** Step Functions Express: $1.00 per million requests. */
  expressPerRequest: 1.0 / 1_000_000,
  /** Step Functions Express duration: $0.00001667 per GB-second (first 1,000 GB-hours). */
  expressPerGbSecond: 0.00001667,
  /** Express bills memory in 64 MB chunks; a Stepforge execution's state stays in the first chunk. */
  expressMemoryGb: 64 / 1024,
  /** Express duration is billed in 100 ms increments. */
  expressBillingIncrementMs: 100,
  /** Lambda: $0.20 per million requests. */
  lambdaPerRequest: 0.2 / 1_000_000,
  /** Lambda duration on arm64 (the stack's architecture): $0.0000133334 per GB-second. */
  lambdaPerGbSecond: 0.0000133334,
  /** DynamoDB on-demand: $0.625 per million write request units. */
  dynamoPerWriteUnit: 0.625 / 1_000_000,
} as const;

/** Per-invocation assumptions: billed duration (ms) and memory (MB, as the stack sizes each handler). */
export const HANDLER_ASSUMPTIONS: Readonly<Record<string, { readonly durationMs: number; readonly memoryMb: number }>> = {
  model: { durationMs: 2000, memoryMb: 512 },
  tool: { durationMs: 300, memoryMb: 256 },
  connector: { durationMs: 300, memoryMb: 256 },
  function: { durationMs: 200, memoryMb: 512 },
  mcpTool: { durationMs: 500, memoryMb: 256 },
};

/**
 * DynamoDB writes (1 KB items, 1 WRU each) per run and per step invocation, following the runtime's
 * persistence design (DESIGN §2): run record created and finished; per step invocation the claim (a
 * conditional put of the step record, which also holds the idempotency lease) and its commit; one
 * conversation append per agent turn (an upper bound: a step that answers on its first turn writes none).
 */
export const DYNAMO_ASSUMPTIONS = {
  writesPerRun: 2,
  writesPerInvocation: 2,
  extraWritesPerModelTurn: 1,
} as const;

/** How the scripted run behaves: agent loops do one tool round; for_each gets this many items. */
export const RUN_ASSUMPTIONS = {
  toolCallsPerAgentRound: 2,
  agentToolRounds: 1,
  arrayInputItems: 3,
} as const;
