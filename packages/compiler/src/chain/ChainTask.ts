import { z } from 'zod';

/** Handles and tool names: `[A-Za-z_][A-Za-z0-9_-]*`. */
export const NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** Kortecx's `tool_contract`: `{tool_id: version}`; the ids are the tools granted (model) or fired (tool). */
export const ToolContractSchema = z.record(
  z.string().regex(NAME_PATTERN, { message: 'a tool name matching [A-Za-z_][A-Za-z0-9_-]* (a tool installed in this project)' }),
  z.string().min(1, { message: 'a non-empty tool version, e.g. "1"' }),
);

/** Kortecx's `params`: free config entries whose values are strings (as Kortecx encodes them). */
export const ParamsSchema = z.record(z.string().min(1), z.string());

/** Kortecx's `body_signature_id`: a registered body's id, 64 hex digits (or null). */
export const BodySignatureSchema = z
  .string()
  .regex(/^[0-9A-Fa-f]{64}$/, { message: 'a body signature id of 64 hex digits' })
  .nullable();

/** A retry policy on a task; lowered to an ASL `Retry` entry. */
export const RetryPolicySchema = z
  .strictObject({
    max_attempts: z.number().int().min(0).max(99).optional(),
    interval_seconds: z.number().int().min(1).max(99_999_999).optional(),
    backoff_rate: z.number().min(1).optional(),
    max_delay_seconds: z.number().int().min(1).max(31_622_400).optional(),
    jitter: z.enum(['FULL', 'NONE']).optional(),
    errors: z.array(z.string().min(1)).min(1).optional(),
  })
  // Names the object in "unknown field" messages: "(a retry policy has max_attempts, …)".
  .describe('a retry policy');

/** `{kind: model, model?: "<provider>:<model-id>", prompt, max_turns?, max_tool_calls?, select?, retry?}`. */
export const ModelTaskSchema = z.strictObject({
  kind: z.literal('model'),
  model: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+:\S+$/, { message: 'a model id "<provider>:<model-id>", e.g. "bedrock:anthropic.claude-3-5-haiku"' })
    .optional(),
  prompt: z.string().min(1, { message: 'a non-empty prompt template' }),
  system: z.string().optional(),
  max_turns: z.number().int().min(1).optional(),
  max_tool_calls: z.number().int().min(0).optional(),
  /**
   * `verbatim`: a consensus judge. Its answer must be one of its parents' outputs exactly; anything
   * else fails the step with JudgeChoiceNotCandidate.
   */
  select: z.literal('verbatim').optional(),
  retry: RetryPolicySchema.optional(),
  timeout_seconds: z.number().int().min(1).optional(),
  // Kortecx's spelling of the same task (see kortecxTask.ts): `model_id` for `model`, granted tools, params.
  model_id: z.string().optional(),
  tool_contract: ToolContractSchema.optional(),
  params: ParamsSchema.optional(),
  body_signature_id: BodySignatureSchema.optional(),
});

/** `{kind: tool, tool: "<name>", args?: {…}}`. */
export const ToolTaskSchema = z.strictObject({
  kind: z.literal('tool'),
  /** Required unless Kortecx's `tool_contract` names the tool. */
  tool: z.string().regex(NAME_PATTERN, { message: 'a tool name matching [A-Za-z_][A-Za-z0-9_-]*' }).optional(),
  args: z.record(z.string(), z.unknown()).optional(),
  retry: RetryPolicySchema.optional(),
  timeout_seconds: z.number().int().min(1).optional(),
  tool_contract: ToolContractSchema.optional(),
  params: ParamsSchema.optional(),
  body_signature_id: BodySignatureSchema.optional(),
});

/** `{kind: connector, connector: "slack", action: "send_message", input?: {…}}`. */
export const ConnectorTaskSchema = z.strictObject({
  kind: z.literal('connector'),
  connector: z.string().min(1),
  action: z.string().min(1),
  input: z.record(z.string(), z.unknown()).optional(),
  retry: RetryPolicySchema.optional(),
  timeout_seconds: z.number().int().min(1).optional(),
});

/**
 * `{kind: pure, expr: "<JSONata over the parents' outputs>"}`: deterministic, no model call. Without
 * `expr` (Kortecx's bare `{kind: pure}`) the step passes its input through.
 */
export const PureTaskSchema = z.strictObject({
  kind: z.literal('pure'),
  expr: z.string().min(1, { message: 'a non-empty JSONata expression' }).optional(),
  params: ParamsSchema.optional(),
  body_signature_id: BodySignatureSchema.optional(),
});

/** Any chain task, discriminated by `kind`. */
export const ChainTaskSchema = z.discriminatedUnion('kind', [ModelTaskSchema, ToolTaskSchema, ConnectorTaskSchema, PureTaskSchema]);

export type RetryPolicy = z.infer<typeof RetryPolicySchema>;
export type ModelTask = z.infer<typeof ModelTaskSchema>;
export type ToolTask = z.infer<typeof ToolTaskSchema>;
export type ConnectorTask = z.infer<typeof ConnectorTaskSchema>;
export type PureTask = z.infer<typeof PureTaskSchema>;
/** A task from a chain document's `tasks:` map. */
export type ChainTask = ModelTask | ToolTask | ConnectorTask | PureTask;

/** The task kinds a chain document knows. */
export const CHAIN_TASK_KINDS = ['model', 'tool', 'connector', 'pure'] as const;
