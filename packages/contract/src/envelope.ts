// The contract between the compiled state machine and every step Lambda. The ASL builds a
// StepEnvelope as the Lambda `Payload`; the handlers in functions/ validate it with exactly these
// schemas and answer with one of the result schemas below. Keep this file stable: ASL already
// deployed and handlers bundled at different times must keep agreeing.
import * as z from 'zod';

/** Step kinds that reach a Lambda (pure / conditional / control steps never do). */
export const LambdaStepKind = z.enum(['model', 'agent', 'tool', 'connector', 'function', 'mcp_tool']);
/** A Lambda step kind. */
export type LambdaStepKind = z.infer<typeof LambdaStepKind>;

/** A large value stored outside the state payload (DESIGN §2): where it is, how big, and its hash. */
export const OutputRef = z.object({
  ref: z.string().min(1),
  bytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
/** A large value stored outside the state payload. */
export type OutputRef = z.infer<typeof OutputRef>;

/** A step value as it travels in state variables: inline JSON, or `{"$ref": OutputRef}` for large outputs. */
export const RefValue = z.object({ $ref: OutputRef });
/** A by-reference step value. */
export type RefValue = z.infer<typeof RefValue>;

/** True when a state value is a by-reference output (`{"$ref": {ref, bytes, sha256}}`). */
export function isRefValue(v: unknown): v is RefValue {
  // Most values are not references: answer those without a failed parse (which builds an error).
  if (typeof v !== 'object' || v === null || !('$ref' in v)) return false;
  return RefValue.safeParse(v).success;
}

/** Which run this step belongs to. */
export const EnvelopeRun = z.object({
  /** The execution name (Step Functions) / run id (embedded). */
  id: z.string().min(1),
  /** The workflow (state machine) name from the source document. */
  workflow: z.string().min(1),
  idempotencyKey: z.string().nullable().optional(),
  parentRunId: z.string().nullable().optional(),
});

/** Which step, and where inside loops / maps it is. */
export const EnvelopeStep = z.object({
  /** The step id from the source (task handle or DSL step name; nested steps are `outer.inner`). */
  id: z.string().min(1),
  kind: LambdaStepKind,
  /** Stable identity hash over kind, configuration and tool grants (same as the step manifest's). */
  identity: z.string().min(1),
  /** Indices of the enclosing for_each / while / judge_loop iterations, outermost first (empty at top level). */
  iteration: z.array(z.number().int().nonnegative()).default([]),
  /** Role inside a composite step: e.g. `generator`/`evaluator` (judge_loop), `analyst:<role>`, `entry`, `specialist:<role>`, `reason`. */
  role: z.string().optional(),
});

/** Turn and tool-call budget: the limits and what this step already used. */
export const Budget = z.object({
  maxTurns: z.number().int().nonnegative(),
  maxToolCalls: z.number().int().nonnegative(),
  turnsUsed: z.number().int().nonnegative().default(0),
  toolCallsUsed: z.number().int().nonnegative().default(0),
});
/** A step's budget. */
export type Budget = z.infer<typeof Budget>;

/**
 * The step's inputs. `value` is what the ASL resolved (its JSONata translation of the source template).
 * Version 2: `steps` holds only the read steps a model handler appends as context (those the prompt
 * template does not place), and `input` is present only where a handler may fall back to it (no value,
 * or one that may be null). Version 1 also sent `template` (the unevaluated source template) and every
 * read step, and left the "placed" test to the handler.
 */
export const EnvelopeInputs = z.object({
  value: z.unknown().optional(),
  /** Version 1 only. */
  template: z.unknown().optional(),
  steps: z.record(z.string(), z.unknown()).default({}),
  /** The workflow input (run input after defaults). */
  input: z.unknown().optional(),
  /**
   * A consensus judge's candidates, by step id (values inline or `{"$ref"}`): the handler fails the step
   * with `JudgeChoiceNotCandidate` unless the answer is one of them verbatim. Absent for any other step.
   */
  candidates: z.record(z.string(), z.unknown()).optional(),
});

/** One tool call proposed by a model turn. */
export const ToolCall = z.object({
  id: z.string().min(1),
  tool: z.string().min(1),
  args: z.unknown(),
});
/** One tool call proposed by a model turn. */
export type ToolCall = z.infer<typeof ToolCall>;

/** Token / call usage reported by a handler. */
export const Usage = z
  .object({
    inputTokens: z.number().int().nonnegative().default(0),
    outputTokens: z.number().int().nonnegative().default(0),
    turns: z.number().int().nonnegative().optional(),
    toolCalls: z.number().int().nonnegative().optional(),
  })
  .default({ inputTokens: 0, outputTokens: 0 });
/** Token / call usage reported by a handler. */
export type Usage = z.infer<typeof Usage>;

/** For the reason Lambda of an agent loop: which turn, and the previous turn's tool results. */
export const EnvelopeTurn = z.object({
  index: z.number().int().nonnegative(),
  /** Results of the tool calls the previous turn asked for (the conversation itself lives in DynamoDB). */
  toolResults: z.array(z.object({ id: z.string(), tool: z.string(), result: z.unknown() })).default([]),
});

/** The payload every step Lambda receives. */
export const StepEnvelope = z.object({
  version: z.union([z.literal(1), z.literal(2)]),
  run: EnvelopeRun,
  step: EnvelopeStep,
  /**
   * The step's configuration from the source (model id, prompt, tool name + args, connector + action, function name,
   * MCP server + tool, …). Version 2 leaves out what travels elsewhere: a model step's `prompt` when `inputs.value`
   * is the rendered prompt, and `max_turns` / `max_tool_calls` (see `budget`).
   */
  config: z.record(z.string(), z.unknown()),
  inputs: EnvelopeInputs,
  budget: Budget.optional(),
  /** Tools this step is granted; the runtime refuses any other (`ToolNotGranted`). */
  tools: z.array(z.string()).default([]),
  /** Secret binding ids (`$secret:<id>` → `<id>`), never values. */
  secrets: z.array(z.string()).default([]),
  /** Agent-loop turn (reason Lambda only). */
  turn: EnvelopeTurn.optional(),
  /** The single tool call to perform (tool Lambda inside an agent loop's Map only). */
  toolCall: ToolCall.optional(),
  /**
   * Which attempt of its state this call is: Step Functions' `$states.context.State.RetryCount`
   * (0 the first, 1 after the first Retry, …). A first attempt of a run that is not a fork cannot
   * find a finished attempt of the same step ahead of it, so a step that is harmless to repeat
   * may start before its idempotency claim (the late claim, see functions' runIdempotent). Absent
   * (an envelope built elsewhere, ASL compiled before it): the step claims first.
   */
  attempt: z.number().int().nonnegative().optional(),
  /**
   * The state machine reads this output itself (a guard, condition, `for_each` items, a pure step, hand-off
   * routing): the handler returns it inline up to STATE_READ_OUTPUT_MAX_BYTES and fails with OutputTooLarge
   * above that, never by reference. Absent: inline up to INLINE_OUTPUT_MAX_BYTES, by reference above.
   */
  readByStateMachine: z.literal(true).optional(),
  /**
   * A lower inline limit for this step's output (ITERATION_INLINE_OUTPUT_MAX_BYTES inside a `for_each`
   * iteration): larger outputs are stored by reference. The runtime's own limit applies when it is lower.
   * Absent: the runtime's limit (at most INLINE_OUTPUT_MAX_BYTES). Never set with readByStateMachine.
   */
  inlineOutputMaxBytes: z.number().int().positive().optional(),
});
/** The payload every step Lambda receives. */
export type StepEnvelope = z.infer<typeof StepEnvelope>;
/** What the ASL may send before defaults apply. */
export type StepEnvelopeInput = z.input<typeof StepEnvelope>;

/**
 * A plain step's result: `output` inline or, when it is too large for the state payload, `{"$ref": outputRef}`
 * with `outputRef` repeated beside it (the state machine reads `output` only; run records read `outputRef`).
 */
export const StepResult = z.object({
  status: z.enum(['succeeded', 'reused']).default('succeeded'),
  output: z.unknown().optional(),
  outputRef: OutputRef.optional(),
  usage: Usage,
});
/** A plain step's result. */
export type StepResult = z.infer<typeof StepResult>;

/** One agent turn: either done with an output (`{"$ref": outputRef}` when stored, as in StepResult), or asking for tool calls. */
export const ModelTurnResult = z.object({
  /** `reused` when the turn's committed answer came back (a retry or a fork) rather than a new model call; absent otherwise. */
  status: z.enum(['succeeded', 'reused']).optional(),
  done: z.boolean(),
  output: z.unknown().optional(),
  outputRef: OutputRef.optional(),
  toolCalls: z.array(ToolCall).optional(),
  usage: Usage,
});
/** One agent turn's result. */
export type ModelTurnResult = z.infer<typeof ModelTurnResult>;

/** One tool call's result inside an agent loop. */
export const ToolCallResult = z.object({
  /** `reused` when the call's committed result came back rather than a new call; absent otherwise. */
  status: z.enum(['succeeded', 'reused']).optional(),
  id: z.string().min(1),
  tool: z.string().min(1),
  result: z.unknown(),
  /** Set when the call was refused or failed in a way the model should see (e.g. `ToolNotGranted`). */
  error: z.object({ name: z.string(), message: z.string() }).optional(),
  usage: Usage.optional(),
});
/** One tool call's result. */
export type ToolCallResult = z.infer<typeof ToolCallResult>;

/** The run metadata carried under RUN_META_KEY in the execution input. */
export const RunMeta = z.object({
  idempotencyKey: z.string().nullable().optional(),
  parentRunId: z.string().nullable().optional(),
});
