// The intermediate representation every front-end lowers into and the one back end consumes.
// Plain readonly data only: behaviour lives in functions over it (schedule, lower, quotas).
import type { ManifestStepKind, ManifestTrigger, SourceLocation } from '@stepforge/contract';
import type { Template } from '../expr/ExpressionAst.js';
import type { InputSchema } from '../input/InputSchema.js';

/**
 * Every step kind the back end knows: chain kinds, then DSL kinds, then workflows written in code. The
 * contract names them, as the step manifest carries them.
 */
export type IrStepKind = ManifestStepKind;

/** A retry policy, already normalised from the source's field names. */
export interface IrRetry {
  /** Total attempts including the first (1 = no retry). */
  readonly maxAttempts: number;
  readonly intervalSeconds: number;
  readonly backoffRate: number;
  readonly maxDelaySeconds?: number;
  readonly jitter: boolean;
  /** Error names to retry; default: any task failure. */
  readonly errors?: readonly string[];
}

/**
 * A value computed at run time in the step's scope. `template`: JSON whose string leaves may hold
 * `${ }` expressions (DSL / chain templates; translated per scope by the expression translator).
 * `jsonata`: raw JSONata (chain `pure`), evaluated with `$` = the parents' outputs keyed by handle and
 * `$input` = the workflow input.
 */
export type IrExpr =
  | { readonly kind: 'template'; readonly value: unknown; readonly reads: readonly string[] }
  | { readonly kind: 'jsonata'; readonly jsonata: string; readonly reads: readonly string[] };

/** A role-labelled agent inside a composite step (analyst, specialist, generator, evaluator…). */
export interface IrAgentRef {
  readonly agent: string;
  readonly role: string;
  /** Identity hash of this sub-call (for the envelope). */
  readonly identity: string;
  /** The agent's declared configuration (`model`, `instructions`, …), when it has any. */
  readonly agentConfig?: Readonly<Record<string, unknown>>;
  /** An analyst's `focus:` (what it looks at), sent with each call of it. */
  readonly focus?: string;
}

/** Kind-specific fields for composite steps. */
export interface IrComposite {
  /** for_each: the items; while / judge_loop / conditional: the condition (pass_condition). */
  readonly items?: IrExpr;
  readonly condition?: IrExpr;
  /** for_each: the item variable name under `input` (default `item`). */
  readonly as?: string;
  readonly maxIterations?: number;
  /** for_each: up to 10 items at once when true. */
  readonly parallel?: boolean;
  /** for_each / while: the body (a nested workflow); conditional: its inline branches (no edges). */
  readonly body?: IrWorkflow;
  /** while: the ids of body steps that a sibling reads from the previous iteration (null in the first). */
  readonly carried?: readonly string[];
  /** conditional: the indices in `body` of the step run when the condition holds / does not. */
  readonly thenStep?: number;
  readonly elseStep?: number;
  /** parallel_analyzer: analysts + aggregator; handoff_router: entry + specialists; judge_loop: generator + evaluator. */
  readonly analysts?: readonly IrAgentRef[];
  readonly aggregator?: IrAgentRef;
  readonly entry?: IrAgentRef;
  readonly specialists?: readonly IrAgentRef[];
  readonly generator?: IrAgentRef;
  readonly evaluator?: IrAgentRef;
  /** handoff_router: most specialist hops before the loop stops. */
  readonly maxHandoffs?: number;
  /** code_graph: a workflow written in code (nodes run in the function handler, edges become Choices). */
  readonly graph?: IrCodeGraph;
  /** code_graph: an agent SDK workflow (`workflow`, `parallel`, `stateGraph`); `graph` lists its nodes for views. */
  readonly sdk?: IrSdkFlow;
}

/** An agent as the agent SDK's `agent({model, instructions, tools})` describes it. */
export interface IrSdkAgent {
  readonly name: string;
  readonly model?: string;
  readonly instructions?: string;
  readonly tools: readonly string[];
}

/**
 * A step of an agent SDK `workflow` or a branch of a `parallel` group: an agent, and which of the
 * user's functions it has (`when`, `transform`; the handler finds them by `path`, the indices into
 * the workflow's steps).
 */
export interface IrSdkStep {
  readonly name: string;
  readonly path: readonly number[];
  readonly agent: IrSdkAgent;
  readonly when: boolean;
  readonly transform: boolean;
  readonly retry?: IrRetry;
  /** A parallel branch's own input (`input:`), instead of the group's. */
  readonly input?: unknown;
}

/** One entry of a `workflow([...])`: a step, or a `parallel([...])` group. */
export type IrSdkItem =
  | { readonly kind: 'step'; readonly step: IrSdkStep }
  | { readonly kind: 'parallel'; readonly name: string; readonly branches: readonly IrSdkStep[] };

/** A `stateGraph` node: a function over the state, or an agent node (inputFn → agent → mergeFn). */
export interface IrSdkGraphNode {
  readonly name: string;
  readonly agent?: IrSdkAgent;
  /** Where it goes next: a node or `__end__` (fixed), a router function, or nowhere (`noEdge`). */
  readonly next?: { readonly to: string } | { readonly router: true };
}

/** An agent SDK workflow; its functions run in the function handler, its agents in the model handler. */
export interface IrSdkFlow {
  readonly module: string;
  readonly exportName: string;
  readonly shape: 'workflow' | 'parallel' | 'stateGraph';
  /** workflow: its steps in order. */
  readonly items?: readonly IrSdkItem[];
  /** parallel: its branches. */
  readonly branches?: readonly IrSdkStep[];
  /** stateGraph: its nodes, the first to run, and the bound on node runs. */
  readonly nodes?: readonly IrSdkGraphNode[];
  readonly start?: string;
  readonly maxIterations?: number;
}

/** A node of a code workflow: the function handler calls it by name in the user's module. */
export interface IrCodeNode {
  readonly name: string;
  /** What `graph` shows it as (`node` when absent). */
  readonly kind?: string;
  /** Tools its agent is granted. */
  readonly tools?: readonly string[];
  readonly retry?: IrRetry;
  readonly params?: Readonly<Record<string, unknown>>;
  /** useWorkflow: the node runs this child workflow (its state machine's name) as a nested execution. */
  readonly child?: IrCodeChild;
}

/** The child workflow a code node calls: its state machine and the module export defining it. */
export interface IrCodeChild {
  /** The child's workflow name (its state machine's name). */
  readonly name: string;
  /** Its Kortyx id. */
  readonly id: string;
  /** The export of the same module holding it (how the CLI and CDK app compile it beside the parent). */
  readonly exportName: string;
}

/** An edge of a code workflow; `when` matches the node's returned `condition`, then its `intent`. */
export interface IrCodeEdge {
  readonly from: string;
  /** A node name or `__end__`. */
  readonly to: string;
  readonly when?: string;
}

/** A workflow written in code, run node by node with the run state threaded through. */
export interface IrCodeGraph {
  /** The module (as the handler imports it) and the export holding the workflow. */
  readonly module: string;
  readonly exportName: string;
  readonly nodes: readonly IrCodeNode[];
  readonly edges: readonly IrCodeEdge[];
  readonly start: string;
  /** Node runs before the run fails with MaxIterationsExceeded. */
  readonly maxIterations: number;
  /**
   * The workflows a node may hand the run over to (Kortyx's `transitionTo`): the module's other
   * Kortyx workflows, each started as a nested execution when the workflow ends with one pending.
   */
  readonly handoffs?: readonly IrCodeChild[];
}

/** One step. */
export interface IrStep {
  /** Unique within its workflow (nested steps: unique within their body; ids of the whole document are unique). */
  readonly id: string;
  readonly kind: IrStepKind;
  /** Stable hash over kind, configuration and tools. */
  readonly identity: string;
  /** What the handler needs (model, prompt, tool + args, connector + action, function, server + tool, agent…). */
  readonly config: Readonly<Record<string, unknown>>;
  readonly tools: readonly string[];
  /** Secret binding ids referenced (never values). */
  readonly secrets: readonly string[];
  readonly retry?: IrRetry;
  readonly timeoutSeconds?: number;
  /** Agent-loop budget (model steps granted tools). */
  readonly budget?: { readonly maxTurns: number; readonly maxToolCalls: number };
  /**
   * A routed model step granted tools that does not run them itself: each run is one model turn,
   * and the tool calls it asks for are handed to the step that names it in `runsToolCallsOf`
   * (Contenox's chat_completion → `tool_call` → execute_tool_calls).
   */
  readonly handsOverToolCalls?: boolean;
  /** A routed step that runs the tool calls the `handsOverToolCalls` step with this id handed over. */
  readonly runsToolCallsOf?: string;
  /** The step's resolved input (DSL `input`/`input_template`, chain prompt/args/input). */
  readonly input?: IrExpr;
  /** `when` guard: the step is skipped (stores null) unless truthy. */
  readonly when?: IrExpr;
  /**
   * JSONata over `$out` (what the step's handler answered) whose value becomes the step's output
   * (a Contenox tools task's `output_template`, rendered over the tool's JSON output).
   */
  readonly outputExpr?: string;
  /** chain `pure`: the JSONata transform. DSL `conditional`: see composite.condition. */
  readonly expr?: IrExpr;
  /** Consensus judge: its output must be one of these steps' outputs, verbatim. */
  readonly chooseFrom?: readonly string[];
  readonly composite?: IrComposite;
  readonly location?: SourceLocation;
  /** DSL: the name of the step's output (`output:`, GraphN's canvas node id; the step name by default). */
  readonly output?: string;
  /** Estimated duration (any unit, e.g. seconds from past runs) used to pick cuts; default 1. */
  readonly estimatedDuration?: number;
}

/** A workflow (or a loop body): steps, data/ordering edges between them, and the result. */
export interface IrWorkflow {
  readonly steps: readonly IrStep[];
  /** `[from, to]` step indices: `to` runs after `from` (and may read its output). */
  readonly edges: readonly (readonly [number, number])[];
  /** The result expression (DSL `output`); default: the last step's output in execution order. */
  readonly output?: IrExpr;
  /** Index of the default result step (last in topological order, source order breaking ties). */
  readonly resultStep?: number;
  /**
   * A routed workflow (Contenox task chains): no data edges; it starts at step 0 and after each step
   * `routes[i]` picks the next one at run time, cycles allowed. Steps read the output of the step that
   * ran before them as the variable `$prev`; the result is the last step's output.
   */
  readonly routes?: readonly IrRoute[];
  /**
   * A routed workflow's transitions (step indices) whose counts a step's text reads (as
   * `edgeCounterVariable(from, to)`) though no branch asks about them: they are counted as well.
   */
  readonly countedEdges?: readonly (readonly [number, number])[];
  /**
   * A routed workflow's steps read the errors on_failure took (Contenox's `last_error` and
   * `<task id>_error`): they are kept, by those names, in the variable CONTENOX_ERRORS.
   */
  readonly keepsErrors?: boolean;
}

/** How a routed workflow goes on after one step. */
export interface IrRoute {
  /** JSONata over `$out` (the step's output) giving the text the branches compare. */
  readonly evaluate: string;
  /** Compare case-insensitively (Contenox's `route` handler). */
  readonly ignoreCase?: boolean;
  /** Ordered, first match wins; none matching fails the run (States.NoChoiceMatched). Empty: the run ends. */
  readonly branches: readonly IrRouteBranch[];
  /** Where a failure of the step goes (its error output becomes `$prev`); absent: the run fails. */
  readonly onFailure?: number;
  /** What `$prev` becomes after the step (Contenox `route` passes its input on); absent: the step's output. */
  readonly output?: IrExpr;
  /** The step ends the run failed with this error name, its output as the cause. */
  readonly raise?: string;
}

/** One branch of an IrRoute. */
export interface IrRouteBranch {
  readonly operator: 'equals' | 'contains' | 'starts_with' | 'ends_with' | 'default' | 'edge_traversed_at_least';
  readonly when: string;
  readonly goto: number | 'end';
  /**
   * edge_traversed_at_least: the counted transition (step indices). An edge to `end` is never
   * counted (a count goes up when the next step starts), so it stays 0.
   */
  readonly edge?: readonly [number, number | 'end'];
}

/** A whole document in IR form. */
export interface IrDocument {
  /** The workflow name: the state machine's and the compiled files' (ASCII, ≤ 80, see workflowSlug). */
  readonly name: string;
  /** The name as the document writes it, for people to read (DSL `document.name`); absent: `name`. */
  readonly displayName?: string;
  /** Where the name is written, when the document writes one. */
  readonly nameLocation?: SourceLocation;
  readonly format: 'chain' | 'dsl' | 'contenox' | 'code';
  readonly workflow: IrWorkflow;
  /** Defaults of the `input:` schema, merged under the execution input. */
  readonly inputDefaults?: Readonly<Record<string, unknown>>;
  /** The document's `input:` schema, as the front-end read it (the run service checks a run's input against it). */
  readonly inputSchema?: InputSchema;
  readonly file?: string;
  /** The source text (for error excerpts). */
  readonly source?: string;
  /**
   * `${ }` strings the front-end has parsed already (each Template carries its text): lowering reuses
   * them rather than parsing every template a second time, and parses any string not listed.
   */
  readonly templates?: readonly Template[];
  /** What the document asks of its deployment (chain and DSL documents); absent: nothing. */
  readonly deployment?: IrDeployment;
}

/** A document's deployment settings, which the manifest hands to the CDK app. */
export interface IrDeployment {
  /** `express: true`: deploy as Express when the workflow can run as one. */
  readonly express?: boolean;
  /** `triggers:`, checked and normalised. */
  readonly triggers?: readonly ManifestTrigger[];
  /** DSL `mcp_servers:` declared as mappings, by name. */
  readonly mcpServers?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** Secret ids the document binds for no step in particular (DSL top-level `secrets:`). */
  readonly secrets?: readonly string[];
}

/** Structured control derived from a workflow's DAG (series-parallel form). */
export type IrControl =
  | { readonly type: 'step'; readonly step: number }
  | { readonly type: 'sequence'; readonly items: readonly IrControl[] }
  | { readonly type: 'parallel'; readonly branches: readonly IrControl[] };
