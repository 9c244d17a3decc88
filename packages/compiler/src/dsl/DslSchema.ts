// The zod schema of a DSL document. It checks shapes only (types, required fields, defaults, unknown
// fields); references, secrets and expressions are checked afterwards with source locations. It is
// also the source of schemas/workflow.schema.json (z.toJSONSchema) for editor support.
import { z } from 'zod';
import { InputSectionSpec } from '../input/InputSchema.js';

/** Step names: identifiers the expression language can spell (`steps.<name>.output`), ≤ 80 chars. */
export const STEP_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

const StepName = z.string()
  .regex(STEP_NAME, { error: 'a step name must start with a letter or _ and contain only letters, digits, _ and -' })
  .max(80, { error: 'a step name must be at most 80 characters (Step Functions state names)' })
  .describe('Unique step name; read its result as ${ steps.<name>.output }.');

const Name = z.string().min(1);

/** A declared agent / function / MCP server: a mapping (possibly empty) or a `res://…` URI. */
const Resource = z.union([
  z.string().regex(/^res:\/\/\S+$/, { error: 'expected a res://… URI or a mapping' }),
  z.record(z.string(), z.unknown()),
  z.null(),
], { error: 'expected a mapping ({} or configuration) or a res://… URI' });

/** A condition: a `${ }` template, a bare expression, or a boolean. */
const Condition = z.union([z.string(), z.boolean()], { error: 'expected an expression (string) or a boolean' });

const PositiveInt = z.number().int().min(1);

const AgentRole = z.strictObject({
  agent: Name.describe('A declared agent.'),
  role: z.string().describe('What this agent does in the group.'),
});

/** Fields every step kind accepts. */
const common = {
  name: StepName,
  description: z.string().optional(),
  input: z.unknown().optional().describe('Input passed to the step; strings may contain ${ } expressions.'),
  input_template: z.string().optional().describe('A template rendered into the step\'s input text.'),
  secrets: z.union([z.record(z.string(), z.string()), z.array(z.string())]).optional()
    .describe('Secret bindings: NAME: $secret:<id> (or the name of a top-level secret).'),
  output: z.unknown().optional().describe('Declared output shape: text, json or a JSON Schema mapping.'),
  after: z.union([Name, z.array(Name)]).optional().describe('Steps that must finish first.'),
  when: Condition.optional().describe('Run only when truthy; otherwise the step is skipped (output null).'),
  retry: z.strictObject({
    max_attempts: PositiveInt.optional().describe('Total attempts including the first (default 3).'),
    initial_backoff: z.union([z.string(), z.number()]).optional().describe('First retry delay: seconds or "2s", "1m".'),
    max_backoff: z.union([z.string(), z.number()]).optional().describe('Cap on the retry delay.'),
    backoff_rate: z.number().min(1).optional().describe('Delay multiplier per attempt (default 2).'),
    jitter: z.union([z.boolean(), z.enum(['FULL', 'NONE'])]).optional().describe('Randomise delays (default true).'),
  }).optional().describe('Retry policy for handler failures (Step Functions Retry).'),
};

// `do` bodies are recursive; z.lazy keeps the schema (and its JSON Schema $defs) finite.
const Body: z.ZodType<unknown[]> = z.lazy(() => z.array(DslStepSpec).min(1, { error: 'a do body needs at least one step' }));

const kinds = [
  z.strictObject({ ...common, kind: z.literal('agent'), agent: Name.describe('A declared agent.') }),
  z.strictObject({ ...common, kind: z.literal('function'), function: Name.describe('A declared function.') }),
  z.strictObject({ ...common, kind: z.literal('mcp_tool'), server: Name.describe('A declared MCP server.'), tool: Name }),
  z.strictObject({ ...common, kind: z.literal('connector'), connector: Name.describe('slack, http, sqs, eventbridge…'), action: Name }),
  z.strictObject({ ...common, kind: z.literal('conditional'), condition: Condition.default(true) }),
  z.strictObject({
    ...common,
    kind: z.literal('for_each'),
    items: z.union([z.string(), z.array(z.unknown())], { error: 'expected an expression or a list' }),
    as: z.string().regex(STEP_NAME, { error: 'as must be an identifier' }).default('item'),
    max_iterations: PositiveInt.default(50),
    parallel: z.boolean().default(false),
    do: Body,
  }),
  z.strictObject({
    ...common,
    kind: z.literal('while'),
    condition: Condition,
    max_iterations: PositiveInt.default(10),
    do: Body,
  }),
  z.strictObject({
    ...common,
    kind: z.literal('parallel_analyzer'),
    analysts: z.array(AgentRole).min(1),
    aggregator: Name.describe('A declared agent that combines the analyses.'),
  }),
  z.strictObject({
    ...common,
    kind: z.literal('handoff_router'),
    entry_agent: Name,
    specialists: z.array(AgentRole).min(1),
  }),
  z.strictObject({
    ...common,
    kind: z.literal('judge_loop'),
    generator: Name,
    evaluator: Name,
    pass_condition: Condition,
    max_iterations: PositiveInt.default(5),
  }),
] as const;

/** One step (any of the ten kinds, discriminated by `kind`). */
export const DslStepSpec = z.discriminatedUnion('kind', kinds, {
  error: (iss) => iss.code === 'invalid_union' && iss.input !== undefined
    ? 'unknown step kind (expected agent, function, mcp_tool, connector, conditional, for_each, while, parallel_analyzer, handoff_router or judge_loop)'
    : undefined,
});

/** The whole DSL document. */
export const DslDocumentSpec = z.strictObject({
  document: z.strictObject({
    dsl: z.union([z.string(), z.number()]).describe('DSL version, e.g. "1.0".'),
    name: z.string().min(1).describe('Workflow name (state machine name).'),
    version: z.union([z.string(), z.number()]).optional(),
    description: z.string().optional(),
  }),
  agents: z.record(z.string(), Resource).optional(),
  functions: z.record(z.string(), Resource).optional(),
  mcp_servers: z.record(z.string(), Resource).optional(),
  secrets: z.record(z.string(), z.string()).optional().describe('name: $secret:<id>'),
  input: InputSectionSpec.optional(),
  chat_hints: z.unknown().optional(),
  steps: z.array(DslStepSpec).min(1, { error: 'a workflow needs at least one step' }),
  output: z.unknown().optional().describe('The workflow result; default: the last step\'s output.'),
  // Deployment settings: read by the CDK app (infra/), accepted here so `--strict` passes them.
  express: z.boolean().optional().describe('Deploy as an Express state machine when the workflow can run as one.'),
  triggers: z.array(z.strictObject({
    name: z.string().min(1),
    description: z.string().optional(),
    event_pattern: z.record(z.string(), z.unknown()).describe('EventBridge event pattern; matching events start a run.'),
  })).optional().describe('EventBridge rules that start this workflow (event id = idempotency key).'),
}).describe('A Stepforge workflow DSL document.');

/** The parsed (defaults applied) shape of a step. */
export type DslStepData = z.output<typeof DslStepSpec>;
/** The parsed (defaults applied) shape of a document. */
export type DslDocumentData = z.output<typeof DslDocumentSpec>;
