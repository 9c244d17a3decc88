// The zod schema of a DSL document. It checks shapes only (types, required fields, defaults, unknown
// fields); references, secrets and expressions are checked afterwards with source locations. It is
// also the source of schemas/workflow.schema.json (z.toJSONSchema) for editor support.
import { z } from 'zod';
import { didYouMean } from '@stepforge/contract';
import { InputSectionSpec } from '../input/InputSchema.js';
import { parseDurationSeconds } from '../source/durations.js';
import { DSL_STEP_KINDS } from './DslDocument.js';
import { TriggersSchema } from '../checks/triggers.js';

/** Step names: identifiers the expression language can spell (`steps.<name>.output`), ≤ 80 chars. */
export const STEP_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * Builds the schemas. Zod schemas are objects built when the code that declares them runs; built at
 * module load, this document's ~100 schemas would cost every command that loads the compiler (a chain
 * document's `stepforge validate` among them) a few ms of start-up, used or not. dslSchemas() builds
 * them on first use, once.
 */
function buildDslSchemas() {
  /** A step's name: the key of its entry in `steps:` (or in a `do:` body). */
  const StepName = z
    .string()
    .regex(STEP_NAME, { error: 'a step name must start with a letter or _ and contain only letters, digits, _ and -' })
    .max(80, { error: 'a step name must be at most 80 characters (Step Functions state names)' })
    .describe('Unique step name; read its result as ${ steps.<name>.output }.');

  const Name = z.string().min(1);

  /** A reference to a step (`after:`). */
  const StepRef = z.string({ error: 'expected a step name' }).min(1);

  /** Trigger names end up in EventBridge rule ids; infra/ allows at most 40 characters. */

  const ResourceUri = z.string().regex(/^res:\/\/\S+$/, { error: 'expected a res://… URI or a mapping' });

  /** `name: ""`: declared by name alone, configured where it is deployed (GraphN's usual declaration). */
  const ByName = z.literal('');

  /** A declared function / MCP server: `""`, a mapping (possibly empty) or a `res://…` URI. */
  const Resource = z.union([ByName, ResourceUri, z.record(z.string(), z.unknown()), z.null()], {
    error: 'expected "" (declared by name), a mapping ({} or configuration) or a res://… URI',
  });

  /**
   * An agent's configuration. Typed field by field because the runtime reads these values as they
   * are: a `tools: web-search` (a string, not a list) would otherwise grant no tools without a word.
   */
  const AgentConfig = z.strictObject({
    description: z.string().optional().describe('What the agent does (for people and chat front-ends).'),
    model: z
      .string({ error: 'expected a model id such as "bedrock:<model id>"' })
      .min(1, { error: 'expected a model id such as "bedrock:<model id>"' })
      .optional()
      .describe("The model, e.g. bedrock:<model id> (default: the provider's)."),
    instructions: z.string({ error: 'expected the system prompt as a string' }).optional().describe('The system prompt.'),
    // 0–2 is the widest range of the providers (OpenAI); which one runs is chosen at run time.
    temperature: z
      .number({ error: 'expected a number from 0 to 2' })
      .min(0, { error: 'expected a number from 0 to 2' })
      .max(2, { error: 'expected a number from 0 to 2' })
      .optional()
      .describe('Sampling temperature, 0–2.'),
    max_tokens: z
      .number({ error: 'expected a positive whole number of tokens' })
      .int({ error: 'expected a positive whole number of tokens' })
      .min(1, { error: 'expected a positive whole number of tokens' })
      .optional()
      .describe('Cap on the tokens of each reply.'),
    tools: z
      .array(z.string({ error: 'expected a tool name (e.g. web-search or mcp.<server>.<tool>)' }).min(1), {
        error: 'expected a list of tool names, e.g. [web-search, fs-read]',
      })
      .optional()
      .describe('Tools granted to its agent steps: registry tools (web-search, fs-read…) or mcp.<server>.<tool>.'),
  });

  /** A declared agent: `""`, a configuration mapping (possibly empty), a `res://…` URI, or nothing. */
  const Agent = z.union([ByName, ResourceUri, AgentConfig, z.null()], {
    error: 'expected "" (declared by name), a mapping ({} or {model, instructions, tools…}) or a res://… URI',
  });

  /**
   * A duration as the lowering reads it (parseDurationSeconds), so what validates is exactly what runs:
   * an unreadable one would otherwise be replaced by the default without a word.
   */
  const DURATION_FORMS = 'a duration: seconds (2) or a string such as "500ms", "3s" or "1m"';
  const Duration = z
    .union([z.string(), z.number()], { error: `expected ${DURATION_FORMS}` })
    .refine((v) => parseDurationSeconds(v) !== undefined, { error: `expected ${DURATION_FORMS}` });

  /** A condition: a `${ }` template, a bare expression, or a boolean. */
  const Condition = z.union([z.string(), z.boolean()], { error: 'expected an expression (string) or a boolean' });

  const PositiveInt = z.number().int().min(1);

  const Role = z
    .string()
    .regex(/\S/, { error: 'a role must not be empty: say what this agent does (e.g. role: billing)' })
    .describe('What this agent does in the group; unique within the list.');

  const AgentRole = z.strictObject({
    agent: Name.describe('A declared agent.'),
    role: Role,
  });

  /** An analyst of a parallel_analyzer: `{agent, role}` (with `analysts:`) or `{agent, focus}` (with `agents:`). */
  const Analyst = z.strictObject({
    agent: Name.describe('A declared agent.'),
    role: Role.optional(),
    focus: z.string().optional().describe('What this analyst looks at; it is given to the analyst with the input.'),
  });

  /** Fields every step kind accepts. */
  const common = {
    description: z.string().optional(),
    input: z.unknown().optional().describe('Input passed to the step; strings may contain ${ } expressions.'),
    input_template: z.string().optional().describe("A template rendered into the step's input text."),
    secrets: z
      .union([z.record(z.string(), z.string()), z.array(z.string())])
      .optional()
      .describe('Secret bindings: NAME: $secret:<id> (or the name of a top-level secret).'),
    output: z
      .string({ error: "expected the name of this step's output (its canvas node id), e.g. output: summary" })
      .regex(/\S/, { error: "expected the name of this step's output (its canvas node id), e.g. output: summary" })
      .optional()
      .describe(
        "The name of this step's output (its canvas node id); default: the step name. It is not a dependency: read results as ${ steps.<step name>.output }.",
      ),
    after: z
      .union([StepRef, z.array(StepRef)], { error: 'expected a step name or a list of step names' })
      .optional()
      .describe('Steps that must finish first.'),
    when: Condition.optional().describe('Run only when truthy; otherwise the step is skipped (output null).'),
    retry: z
      .strictObject({
        max_attempts: PositiveInt.optional().describe('Total attempts including the first (default 3).'),
        initial_backoff: Duration.optional().describe('First retry delay: seconds or "500ms", "2s", "1m".'),
        max_backoff: Duration.optional().describe('Cap on the retry delay: seconds or "500ms", "2s", "1m".'),
        backoff_rate: z.number().min(1).optional().describe('Delay multiplier per attempt (default 2).'),
        jitter: z
          .union([z.boolean(), z.enum(['FULL', 'NONE'])], { error: 'expected true or false (or FULL / NONE)' })
          .optional()
          .describe('Randomise delays (default true).'),
      })
      .optional()
      .describe('Retry policy for handler failures (Step Functions Retry).'),
  };

  /**
   * A mapping of step name → step definition (`steps:` and every `do:` body); the mapping's source order
   * is the order that breaks ties wherever order matters.
   */
  function stepMap(empty: string): z.ZodType<Record<string, unknown>> {
    return z
      .record(
        StepName,
        z.lazy(() => DslStepSpec),
        { error: 'expected a mapping of step name to step definition (name: {call: …})' },
      )
      .refine((m) => Object.keys(m).length > 0, { error: empty });
  }

  // `do` bodies are recursive; z.lazy keeps the schema (and its JSON Schema $defs) finite.
  const Body: z.ZodType<Record<string, unknown>> = z.lazy(() => stepMap('a do body needs at least one step'));

  // A conditional's inline branch: one step definition (recursive, as `do` bodies are).
  const Branch: z.ZodType<Record<string, unknown>> = z.lazy(() => DslStepSpec);

  /** The kinds of `call:`, each with its own fields (as GraphN writes them). */
  const kinds = [
    z.strictObject({ call: z.literal('agent'), ...common, agent: Name.describe('A declared agent.') }),
    z.strictObject({ call: z.literal('function'), ...common, function: Name.describe('A declared function.') }),
    z.strictObject({
      call: z.literal('mcp_tool'),
      ...common,
      server: Name.describe('A declared MCP server.'),
      tool: Name.describe('The tool to call on it.'),
    }),
    z.strictObject({
      call: z.literal('connector'),
      ...common,
      connector: Name.describe('slack, http, sqs, eventbridge…'),
      action: Name.describe('The connector action, e.g. send_message.'),
    }),
    z.strictObject({
      call: z.literal('conditional'),
      ...common,
      condition: Condition.default(true).describe('Without then/else its output is this boolean; later steps branch with when:.'),
      then: Branch.optional().describe("A step (call: …) run when the condition holds; the conditional's output is then its output."),
      else: Branch.optional().describe(
        "A step (call: …) run when the condition does not hold; the conditional's output is then its output.",
      ),
    }),
    z.strictObject({
      call: z.literal('for_each'),
      ...common,
      items: z
        .union([z.string(), z.array(z.unknown())], { error: 'expected an expression or a list' })
        .describe('The list to loop over (a single value runs once).'),
      as: z
        .string()
        .regex(STEP_NAME, { error: 'as must be an identifier' })
        .default('item')
        .describe('The loop variable, read as ${ input.<as> } (default item).'),
      max_iterations: PositiveInt.default(50).describe('At most this many items (default 50).'),
      parallel: z.boolean().default(false).describe('Run iterations at once (at most 10 at a time).'),
      do: Body.describe('The steps run for each item: a mapping of step name to step definition.'),
    }),
    z.strictObject({
      call: z.literal('while'),
      ...common,
      condition: Condition.describe('Checked before each iteration after the first.'),
      max_iterations: PositiveInt.default(10).describe('At most this many iterations (default 10).'),
      do: Body.describe('The steps of one iteration: a mapping of step name to step definition.'),
    }),
    z.strictObject({
      call: z.literal('parallel_analyzer'),
      ...common,
      analysts: z.array(Analyst).min(1).optional().describe('The analysts, run at once: [{agent, role}].'),
      aggregator: Name.optional().describe('A declared agent that combines the analyses.'),
      agents: z.array(Analyst).min(1).optional().describe('The analysts, run at once: [{agent, focus}] (the other spelling of analysts).'),
      aggregator_agent: Name.optional().describe('A declared agent that combines the analyses (the other spelling of aggregator).'),
    }),
    z.strictObject({
      call: z.literal('handoff_router'),
      ...common,
      entry_agent: Name.describe('The agent that triages and hands off.'),
      specialists: z.array(AgentRole).min(1).describe('The agents it can hand off to: [{agent, role}].'),
    }),
    z.strictObject({
      call: z.literal('judge_loop'),
      ...common,
      generator: Name.optional().describe('The agent that writes each candidate.'),
      evaluator: Name.optional().describe('The agent that judges each candidate.'),
      worker_agent: Name.optional().describe('The agent that writes each candidate (the other spelling of generator).'),
      judge_agent: Name.optional().describe('The agent that judges each candidate (the other spelling of evaluator).'),
      pass_condition: Condition.optional().describe('Stop when this holds; default: the evaluator answered PASS.'),
      max_iterations: PositiveInt.default(5).describe('At most this many rounds (default 5).'),
    }),
  ] as const;

  /** One step (any of the ten kinds, discriminated by `call`). */
  const DslStepSpec = z.discriminatedUnion('call', kinds, {
    error: (iss) =>
      iss.code === 'invalid_union' && iss.input !== undefined ? unknownKind((iss.input as { call?: unknown }).call) : undefined,
  });

  /** The whole DSL document. */
  const DslDocumentSpec = z
    .strictObject({
      document: z.strictObject({
        dsl: z.union([z.string(), z.number()], { error: 'expected a DSL version such as "1.0"' }).describe('DSL version, e.g. "1.0".'),
        // A display name, any text: the state machine's name is derived from it (workflowSlug).
        name: z
          .string({ error: "expected the workflow's display name as text, e.g. name: Document analysis" })
          .regex(/\S/, { error: 'document.name must not be empty: give the workflow a display name, e.g. name: Document analysis' })
          .describe(
            'The workflow\'s display name, any text ("Document analysis"); the state machine name is an ASCII slug of it ("Document-analysis").',
          ),
        version: z.union([z.string(), z.number()]).optional(),
        description: z.string().optional(),
      }),
      agents: z.record(z.string(), Agent).optional(),
      functions: z.record(z.string(), Resource).optional(),
      mcp_servers: z.record(z.string(), Resource).optional(),
      secrets: z.record(z.string(), z.string()).optional().describe('name: $secret:<id>'),
      input: InputSectionSpec.optional(),
      chat_hints: z.unknown().optional(),
      steps: stepMap('a workflow needs at least one step').describe(
        'The steps: a mapping of step name to step definition (each with call:).',
      ),
      output: z.unknown().optional().describe("The workflow result; default: the last step's output."),
      // Deployment settings: read by the CDK app (infra/), accepted here so `--strict` passes them.
      express: z.boolean().optional().describe('Deploy as an Express state machine when the workflow can run as one.'),
      triggers: TriggersSchema.optional().describe('EventBridge rules that start this workflow (event id = idempotency key).'),
    })
    .describe('A Stepforge workflow DSL document.');

  /**
   * The document with its steps left unchecked (each step any value): what zod checks of a document
   * whose steps plainStepData checks (the step names are still checked here).
   */
  const DslDocumentShellSpec = DslDocumentSpec.extend({ steps: z.record(StepName, z.unknown()) });

  return { DslStepSpec, DslDocumentSpec, DslDocumentShellSpec };
}

let built: ReturnType<typeof buildDslSchemas> | undefined;

/** The DSL schemas: `DslStepSpec`, one step (any of the ten kinds, discriminated by `call`), and `DslDocumentSpec`, the whole document. */
export function dslSchemas(): ReturnType<typeof buildDslSchemas> {
  return (built ??= buildDslSchemas());
}

/** The message for a `call:` value that names no step kind. */
export function unknownKind(kind: unknown): string {
  const best = typeof kind === 'string' ? didYouMean(kind, DSL_STEP_KINDS) : undefined;
  const what = typeof kind === 'string' ? `'${kind}'` : (JSON.stringify(kind) ?? String(kind));
  return `unknown step kind call: ${what}${best ? `; did you mean '${best}'?` : ''} (expected agent, function, mcp_tool, connector, conditional, for_each, while, parallel_analyzer, handoff_router or judge_loop)`;
}

/** The parsed (defaults applied) shape of a step. */
export type DslStepData = z.output<ReturnType<typeof dslSchemas>['DslStepSpec']>;
/** The parsed (defaults applied) shape of a document. */
export type DslDocumentData = z.output<ReturnType<typeof dslSchemas>['DslDocumentSpec']>;
