// The workflow DSL's document model after loading and checking: plain readonly data, every step
// carrying its source location. Values that may contain `${ }` are kept as authored (JSON whose string
// leaves may hold templates) together with the parsed templates, so a back end can translate them per
// scope (see dsl/valueTemplates.ts) without re-reading the YAML.
import type { ManifestTrigger, SourceLocation } from '@stepforge/contract';
import type { Template } from '../expr/ExpressionAst.js';
import type { InputSchema } from '../input/InputSchema.js';

/** The ten DSL step kinds. */
export const DSL_STEP_KINDS = [
  'agent',
  'function',
  'mcp_tool',
  'connector',
  'conditional',
  'for_each',
  'while',
  'parallel_analyzer',
  'handoff_router',
  'judge_loop',
] as const;

/** One DSL step kind. */
export type DslStepKind = (typeof DSL_STEP_KINDS)[number];

/** A declared agent, function or MCP server: `{}` (configured elsewhere), a mapping, or a `res://…` URI. */
export interface DslResource {
  readonly name: string;
  /** The `res://…` URI when declared as a string. */
  readonly uri?: string;
  /** The mapping when declared as one (e.g. `{ model, instructions, tools }`). */
  readonly config: Readonly<Record<string, unknown>>;
  readonly location: SourceLocation;
}

/** A secret binding `$secret:<id>` (never a value). */
export interface DslSecret {
  readonly name: string;
  /** The `<id>` after `$secret:`. */
  readonly id: string;
  readonly location: SourceLocation;
}

/** A condition or single expression field (`when`, `condition`, `pass_condition`, `items`). */
export interface DslTemplateField {
  /** The text as authored (a bare expression is normalised to `${ … }`). */
  readonly text: string;
  readonly template: Template;
  readonly location: SourceLocation;
}

/**
 * A value that may contain templates (`input`, `input_template`, workflow `output`): `value` is the
 * JSON as authored; `templates` lists each string leaf that holds a `${ }` with its JSON path.
 */
export interface DslValue {
  readonly value: unknown;
  readonly templates: readonly {
    readonly path: readonly (string | number)[];
    readonly template: Template;
    readonly location: SourceLocation;
  }[];
  /** Step names the value reads (`steps.<name>.output`). */
  readonly reads: readonly string[];
  readonly location: SourceLocation;
}

/** An agent with a role inside a composite step (analyst, specialist). */
export interface DslAgentRole {
  readonly agent: string;
  /** The role as written; an analyst listed without one (`agents: [{agent, focus}]`) has its agent's name. */
  readonly role: string;
  /** What an analyst looks at (`focus:`), when given. */
  readonly focus?: string;
  readonly location: SourceLocation;
}

/** A step's `retry:` policy as authored; durations are seconds or strings such as "2s" / "1m". */
export interface DslRetry {
  readonly max_attempts?: number;
  readonly initial_backoff?: string | number;
  readonly max_backoff?: string | number;
  readonly backoff_rate?: number;
  readonly jitter?: boolean | 'FULL' | 'NONE';
}

/** Fields every step has. */
export interface DslStepBase {
  /** The step's key in `steps:` (or in its `do:` body). */
  readonly name: string;
  /** Its `call:`. */
  readonly kind: DslStepKind;
  readonly description?: string;
  /** The enclosing step for steps in a `do` body. */
  readonly parent?: string;
  readonly input?: DslValue;
  readonly inputTemplate?: DslValue;
  /** Binding name → secret (resolved to `$secret:<id>` bindings; never values). */
  readonly secrets: readonly DslSecret[];
  /**
   * The name of the step's output (`output:`; GraphN's canvas node id), the step name when omitted.
   * A label only: results are read as `steps.<step name>.output`, and it adds no dependency.
   */
  readonly output: string;
  /** Steps named in `after` (as written). */
  readonly after: readonly string[];
  readonly when?: DslTemplateField;
  /** The retry policy as authored (`max_attempts`, `initial_backoff`, `max_backoff`, `backoff_rate`, `jitter`). */
  readonly retry?: DslRetry;
  /**
   * Sibling steps (same scope) this step waits for: `after` plus every `steps.X` read by it or by its
   * nested steps, lifted to this scope. Source order.
   */
  readonly dependencies: readonly string[];
  readonly location: SourceLocation;
}

/** `agent`: one agent invocation. */
export interface DslAgentStep extends DslStepBase {
  readonly kind: 'agent';
  readonly agent: string;
}

/** `function`: a user function. */
export interface DslFunctionStep extends DslStepBase {
  readonly kind: 'function';
  readonly function: string;
}

/** `mcp_tool`: one tool call on a declared MCP server. */
export interface DslMcpToolStep extends DslStepBase {
  readonly kind: 'mcp_tool';
  readonly server: string;
  readonly tool: string;
}

/** `connector`: an action on a connector (slack, http, sqs, eventbridge…). */
export interface DslConnectorStep extends DslStepBase {
  readonly kind: 'connector';
  readonly connector: string;
  readonly action: string;
}

/**
 * `conditional`: evaluates `condition` (default true). Without branches its output is the boolean;
 * with inline `then:` / `else:` steps (named `<step>.then` / `<step>.else`) the one the condition
 * picks runs, the other is skipped, and the output is the branch's (null when none runs).
 */
export interface DslConditionalStep extends DslStepBase {
  readonly kind: 'conditional';
  readonly condition: DslTemplateField;
  readonly then?: DslStep;
  readonly else?: DslStep;
  /** `then` and `else` as a scope (no edges between them), when either is written. */
  readonly branches?: DslScope;
}

/** `for_each`: runs `do` once per item, `input.<as>` bound to the item. */
export interface DslForEachStep extends DslStepBase {
  readonly kind: 'for_each';
  readonly items: DslTemplateField | { readonly literal: readonly unknown[]; readonly location: SourceLocation };
  readonly as: string;
  readonly maxIterations: number;
  readonly parallel: boolean;
  /** Concurrency limit: 10 when parallel, else 1. */
  readonly maxConcurrency: number;
  readonly do: DslScope;
}

/** `while`: runs `do`, then repeats while `condition` holds (the first iteration always runs). */
export interface DslWhileStep extends DslStepBase {
  readonly kind: 'while';
  /** Checked after each iteration, with `input.iteration` = the iterations run so far (`< 3` runs three). */
  readonly condition: DslTemplateField;
  readonly maxIterations: number;
  readonly do: DslScope;
  /** Body steps a sibling written above them reads from the previous iteration (null in the first), to break a cycle. */
  readonly carried?: readonly string[];
}

/** `parallel_analyzer`: analysts in parallel, then the aggregator (`agents` / `aggregator_agent` are read as `analysts` / `aggregator`). */
export interface DslParallelAnalyzerStep extends DslStepBase {
  readonly kind: 'parallel_analyzer';
  readonly analysts: readonly DslAgentRole[];
  readonly aggregator: string;
}

/** `handoff_router`: the entry agent hands off to one specialist. */
export interface DslHandoffRouterStep extends DslStepBase {
  readonly kind: 'handoff_router';
  readonly entryAgent: string;
  readonly specialists: readonly DslAgentRole[];
}

/**
 * `judge_loop`: generate, evaluate, repeat until `pass_condition` or max_iterations. `worker_agent` and
 * `judge_agent` are read as `generator` and `evaluator`; without `pass_condition` the loop stops when
 * the evaluator answers `PASS`.
 */
export interface DslJudgeLoopStep extends DslStepBase {
  readonly kind: 'judge_loop';
  readonly generator: string;
  readonly evaluator: string;
  /** Evaluated with `input.evaluation`, `input.candidate` and `input.iteration` bound. */
  readonly passCondition: DslTemplateField;
  /**
   * No `pass_condition` was written: the loop stops when the evaluator's answer, trimmed and
   * without its leading `[offline:…] ` labels, starts with the word `PASS` (`passCondition` then holds
   * the exact comparison, for display).
   */
  readonly passByDefault: boolean;
  readonly maxIterations: number;
}

/** Any DSL step. */
export type DslStep =
  | DslAgentStep
  | DslFunctionStep
  | DslMcpToolStep
  | DslConnectorStep
  | DslConditionalStep
  | DslForEachStep
  | DslWhileStep
  | DslParallelAnalyzerStep
  | DslHandoffRouterStep
  | DslJudgeLoopStep;

/** A list of sibling steps (the top level, or a `do` body) with the dependency DAG between them. */
export interface DslScope {
  readonly steps: readonly DslStep[];
  /** `[from, to]` indices into `steps`: `to` runs after `from`. Sorted, de-duplicated. */
  readonly edges: readonly (readonly [number, number])[];
  /** Execution order: topological, source order breaking ties (indices into `steps`). */
  readonly order: readonly number[];
  /** The default result: the last step in `order` (index into `steps`), absent for an empty scope. */
  readonly resultStep?: number;
}

/** `document:` metadata. */
export interface DslMetadata {
  readonly dsl: string;
  /** `document.name` as written: the display name. */
  readonly name: string;
  readonly version?: string;
  readonly description?: string;
}

/** A loaded, checked DSL document. */
export interface DslDocument {
  readonly format: 'dsl';
  readonly file?: string;
  /** The workflow name: an ASCII slug of the display name (workflowSlug), the state machine's name. */
  readonly name: string;
  /** `document.name` as written, for people to read. */
  readonly displayName: string;
  /** Where `document.name` is written (errors about the workflow name point there). */
  readonly nameLocation: SourceLocation;
  readonly metadata: DslMetadata;
  readonly agents: Readonly<Record<string, DslResource>>;
  readonly functions: Readonly<Record<string, DslResource>>;
  readonly mcpServers: Readonly<Record<string, DslResource>>;
  readonly secrets: Readonly<Record<string, DslSecret>>;
  readonly input: InputSchema;
  readonly chatHints?: unknown;
  /** The top-level steps. */
  readonly workflow: DslScope;
  /** The workflow result (`output:`); absent → `steps.<workflow.resultStep>.output`. */
  readonly output?: DslValue;
  /** Every inferred dependency (`[from, to]` step names, all scopes), for `graph` to list. */
  readonly dependencies: readonly { readonly from: string; readonly to: string; readonly via: 'after' | 'reference' }[];
  /** `express:` as written (a deployment setting the CDK app reads from the manifest). */
  readonly express?: boolean;
  /** `triggers:`, checked, with names defaulted. */
  readonly triggers?: readonly ManifestTrigger[];
}
