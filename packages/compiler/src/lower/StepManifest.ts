// The step manifest written beside the ASL: one entry per step with what CDK (which Lambdas and
// secrets a state machine needs) and the run history (identity, source location) use.
import { type SourceLocation, kindPlaceholder } from '@stepforge/contract';
import type { IrDocument, IrStep, IrStepKind, IrWorkflow } from '../ir/Ir.js';
import type { LoweredWorkflow } from './lowerWorkflow.js';
import { serialisedDefinition } from './serialisedDefinition.js';

/** Which handler module serves a step (null: no Lambda, the state machine does it itself). */
export type StepHandler = 'model' | 'tool' | 'connector' | 'function' | 'mcp_tool' | null;

/** One step of the manifest. */
export interface StepManifestEntry {
  readonly id: string;
  readonly kind: IrStepKind;
  readonly identity: string;
  /** The state that stands for the step in the console, then every helper state it became. */
  readonly state: string;
  readonly states: readonly string[];
  readonly parent?: string;
  readonly location?: SourceLocation;
  /** DSL: the name of the step's output (GraphN's canvas node id; the step name when `output:` is omitted). */
  readonly output?: string;
  readonly handler: StepHandler;
  /** Lambda placeholders the step's states invoke. */
  readonly functions: readonly string[];
  readonly tools: readonly string[];
  readonly secrets: readonly string[];
  readonly budget?: { readonly maxTurns: number; readonly maxToolCalls: number };
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
  readonly type: 'STANDARD' | 'EXPRESS';
  readonly steps: readonly StepManifestEntry[];
  /** Every `${…}` placeholder the ASL uses (for DefinitionSubstitutions). */
  readonly placeholders: readonly string[];
  /** Every secret id referenced by any step. */
  readonly secrets: readonly string[];
}

const HANDLER: Record<IrStepKind, StepHandler> = {
  model: 'model', agent: 'model', tool: 'tool', connector: 'connector', function: 'function', mcp_tool: 'mcp_tool',
  pure: null, conditional: null, for_each: null, while: null,
  parallel_analyzer: 'model', handoff_router: 'model', judge_loop: 'model', code_graph: 'function',
};

/** Builds the manifest from the IR and what lowering produced. */
export function buildStepManifest(
  doc: IrDocument, lowered: LoweredWorkflow, express: boolean,
  placeholders: readonly string[] = serialisedDefinition(lowered.definition).placeholders,
): StepManifest {
  const steps: StepManifestEntry[] = [];
  const visit = (wf: IrWorkflow): void => {
    for (const s of wf.steps) {
      steps.push(entry(s, lowered));
      if (s.composite?.body) visit(s.composite.body);
    }
  };
  visit(doc.workflow);
  return {
    version: 1,
    workflow: doc.name,
    displayName: doc.displayName ?? doc.name,
    format: doc.format,
    ...(doc.file !== undefined ? { file: doc.file } : {}),
    type: express ? 'EXPRESS' : 'STANDARD',
    steps,
    placeholders: [...placeholders],
    secrets: [...new Set(steps.flatMap((s) => s.secrets))].sort(),
  };
}

function entry(s: IrStep, lowered: LoweredWorkflow): StepManifestEntry {
  const states = lowered.stepStates.get(s) ?? [s.id];
  const parent = lowered.parents.get(s);
  const handler = HANDLER[s.kind];
  const functions = handler === null ? [] : [kindPlaceholder(handler)];
  if (s.kind === 'model' && s.tools.length > 0) functions.push(kindPlaceholder('tool'));
  return {
    id: s.id,
    kind: s.kind,
    identity: s.identity,
    state: states[0]!,
    states,
    ...(parent ? { parent: parent.id } : {}),
    ...(s.location ? { location: s.location } : {}),
    ...(s.output !== undefined ? { output: s.output } : {}),
    handler,
    functions,
    tools: s.tools,
    secrets: s.secrets,
    ...(s.budget ? { budget: s.budget } : {}),
  };
}
