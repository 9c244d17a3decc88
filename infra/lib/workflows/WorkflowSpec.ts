// What the CDK app needs to know about one workflow: the compiled ASL and manifest, and the
// deployment settings the manifest carries (`express:`, `triggers:`) and what the workflow references.
import type { SourceLocation } from '@stepforge/compiler';
import type { StepManifest } from '@stepforge/contract';

/** One EventBridge trigger from a workflow's `triggers:` list. */
export interface TriggerSpec {
  /** Rule name suffix; defaults to the trigger's position. */
  readonly name: string;
  /** An EventBridge event pattern, passed to the rule unchanged. */
  readonly eventPattern: Readonly<Record<string, unknown>>;
  /** Event bus name; undefined means the account's default bus. */
  readonly eventBus?: string;
  /** The document's `description:` of the trigger, which becomes the rule's. */
  readonly description?: string;
}

/** A compiled workflow ready to become a state machine. */
export interface WorkflowSpec {
  /** The workflow name: the state machine's, derived from the document's name (an ASCII slug of it). */
  readonly name: string;
  /** The name as the document writes it (`document.name: Document analysis`), for people to read. */
  readonly displayName: string;
  /** Where the document writes its name, when it does. */
  readonly nameLocation?: SourceLocation;
  /** Path of the source file, relative to the repository root. */
  readonly file: string;
  readonly format: 'chain' | 'dsl' | 'contenox' | 'code';
  /** The ASL definition with `${…}` placeholders still in place. */
  readonly asl: Readonly<Record<string, unknown>>;
  readonly manifest: StepManifest;
  /** True when the workflow asked for Express and can run as Express. */
  readonly express: boolean;
  /** Why an Express request fell back to Standard (undefined when not asked or honoured). */
  readonly expressFallbackReason?: string;
  readonly triggers: readonly TriggerSpec[];
  /** Secret ids referenced through `$secret:<id>`, by the step handler that resolves them. */
  readonly secretsByHandler: Readonly<Record<string, readonly string[]>>;
  /** DSL `mcp_servers:` declarations that are mappings (e.g. `{url}`), by server name. */
  readonly mcpServers: Readonly<Record<string, unknown>>;
  /** The `${Name}` placeholders the ASL uses. */
  readonly placeholders: readonly string[];
  /**
   * A workflow written in code: its module (absolute path) and the bundle the function Lambda
   * imports; for a Kortyx workflow file, the module made of it (`generated`, its imports absolute).
   */
  readonly codeModule?: { readonly source: string; readonly bundle: string; readonly generated?: string };
  /** The state machines its nested executions start (a Kortyx node's useWorkflow child), by workflow name. */
  readonly childWorkflows?: readonly string[];
}

/** Most characters of a display name that descriptions (alarms, 1,024 at most) quote. */
const LABEL_CHARS = 200;

/** How descriptions name a workflow: its display name (cut to 200 characters) and, when it differs, its workflow name. */
export function workflowLabel(wf: Pick<WorkflowSpec, 'name' | 'displayName'>): string {
  if (wf.displayName === wf.name) return wf.name;
  const shown = wf.displayName.length > LABEL_CHARS ? `${wf.displayName.slice(0, LABEL_CHARS - 1)}…` : wf.displayName;
  return `'${shown}' (${wf.name})`;
}
