// The step manifest the compiler writes beside the ASL: what everything after the compiler needs
// to know about a workflow without reading its source again. The CDK app reads its deployment facts
// (triggers, Express, MCP servers, Bedrock models, secrets by handler), the run service its steps,
// edges and input schema (progress, `restart --from`, the input check of every start).
import type { InputSchema } from './inputSchema.js';
import type { SourceLocation } from './StepforgeError.js';
import type { StepHandlerId } from './handlers.js';

/** Every step kind a manifest names: chain kinds, then DSL kinds, then workflows written in code. */
export type ManifestStepKind =
  | 'model'
  | 'tool'
  | 'connector'
  | 'pure'
  | 'agent'
  | 'function'
  | 'mcp_tool'
  | 'conditional'
  | 'for_each'
  | 'while'
  | 'parallel_analyzer'
  | 'handoff_router'
  | 'judge_loop'
  | 'code_graph';

/** Which handler module serves a step (null: no Lambda, the state machine does it itself). */
export type ManifestStepHandler = 'model' | 'tool' | 'connector' | 'function' | 'mcp_tool' | null;

/** One step of the manifest. */
export interface StepManifestEntry {
  readonly id: string;
  readonly kind: ManifestStepKind;
  readonly identity: string;
  /** The state that stands for the step in the console, then every helper state it became. */
  readonly state: string;
  readonly states: readonly string[];
  readonly parent?: string;
  readonly location?: SourceLocation;
  /** DSL: the name of the step's output (GraphN's canvas node id; the step name when `output:` is omitted). */
  readonly output?: string;
  readonly handler: ManifestStepHandler;
  /** Lambda placeholders the step's states invoke. */
  readonly functions: readonly string[];
  readonly tools: readonly string[];
  readonly secrets: readonly string[];
  readonly budget?: { readonly maxTurns: number; readonly maxToolCalls: number };
}

/** One EventBridge rule that starts the workflow (a `triggers:` entry, its name defaulted). */
export interface ManifestTrigger {
  /** The rule's id suffix: the entry's `name`, else `trigger<N>` by its position (1-based). */
  readonly name: string;
  /** The EventBridge event pattern, as written. */
  readonly eventPattern: Readonly<Record<string, unknown>>;
  /** The event bus as written (`default` included); absent: the account's default bus. */
  readonly eventBus?: string;
  readonly description?: string;
  /** Where the entry's `event_pattern` is written. */
  readonly location?: SourceLocation;
}

/** What the document asks of its deployment about Express, and what the compiler found. */
export interface ManifestExpress {
  /** The document's `express: true`: deploy as an Express state machine when the workflow can run as one. */
  readonly requested: boolean;
  /** Why the compiled definition cannot run as Express (a task token wait, a `.sync` job); absent: it can. */
  readonly blocker?: string;
}

/** The manifest of one compiled workflow. */
export interface StepManifest {
  readonly version: 1;
  /** The workflow name (the state machine's). */
  readonly workflow: string;
  /** The name for people to read: the DSL's `document.name` as written (the workflow name otherwise). */
  readonly displayName: string;
  readonly format: 'chain' | 'dsl' | 'contenox' | 'code';
  readonly file?: string;
  /** The type it was compiled for. */
  readonly type: 'STANDARD' | 'EXPRESS';
  /** Every step, nested bodies' included (a nested step names its `parent`). */
  readonly steps: readonly StepManifestEntry[];
  /** `[from, to]` by step id: `to` runs after (and may read) `from`; nested bodies' edges included. */
  readonly edges: readonly (readonly [string, string])[];
  /** The document's `input:` fields, which every start of a run is checked against (none declared: no fields). */
  readonly inputSchema: InputSchema;
  /** Every `${…}` placeholder the ASL uses (for DefinitionSubstitutions). */
  readonly placeholders: readonly string[];
  /** Every secret id referenced by any step. */
  readonly secrets: readonly string[];
  /**
   * Secret ids by the step handler that resolves them: each step's own under its handler, and ids
   * bound by the document for no step in particular (DSL top-level `secrets:`) under every step
   * handler the workflow invokes. A deployed handler may read exactly these and nothing else.
   */
  readonly secretsByHandler: Readonly<Partial<Record<StepHandlerId, readonly string[]>>>;
  readonly express: ManifestExpress;
  readonly triggers: readonly ManifestTrigger[];
  /** DSL `mcp_servers:` declared as mappings (`{url}`, `{command}`), by server name; `res://` references are not listed. */
  readonly mcpServers: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** Bedrock model ids the steps name (`bedrock:<id>` model values in the compiled definition), sorted. */
  readonly bedrockModels: readonly string[];
}
