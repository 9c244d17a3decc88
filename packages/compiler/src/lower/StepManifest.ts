// Builds the step manifest written beside the ASL (its type is the contract's): one entry per step
// with what CDK (which Lambdas and secrets a state machine needs) and the run history (identity,
// source location) use, and the workflow's facts that the CDK app and the run service read rather
// than the source: edges by id, the input schema, and the document's deployment settings.
import {
  type ManifestStepHandler,
  type StepHandlerId,
  type StepManifest,
  type StepManifestEntry,
  LAMBDA_PLACEHOLDERS,
  STEP_HANDLERS,
  stepHandlerIdOf,
} from '@stepforge/contract';
import type { IrDocument, IrStep, IrStepKind, IrWorkflow } from '../ir/Ir.js';
import type { LoweredWorkflow } from './lowerWorkflow.js';
import { serialisedDefinition, type SerialisedDefinition } from './serialisedDefinition.js';
import { kindResource } from './kindResource.js';

export type { ManifestStepHandler as StepHandler, StepManifest, StepManifestEntry } from '@stepforge/contract';

const HANDLER: Record<IrStepKind, ManifestStepHandler> = {
  model: 'model',
  agent: 'model',
  tool: 'tool',
  connector: 'connector',
  function: 'function',
  mcp_tool: 'mcp_tool',
  pure: null,
  conditional: null,
  for_each: null,
  while: null,
  parallel_analyzer: 'model',
  handoff_router: 'model',
  judge_loop: 'model',
  code_graph: 'function',
};

/** What compileIr decided about Express: the type compiled for, and why the definition cannot run as Express. */
export interface ManifestExpressFacts {
  readonly express: boolean;
  readonly blocker?: string;
}

/**
 * Steps and edges in one walk: a body's after the step holding it, as the run service lists them.
 * A function, not a closure made per manifest: see scheduleDag's DagScheduler.
 */
function collectSteps(wf: IrWorkflow, lowered: LoweredWorkflow, steps: StepManifestEntry[], edges: [string, string][]): void {
  for (const [a, b] of wf.edges) edges.push([wf.steps[a]!.id, wf.steps[b]!.id]);
  for (const s of wf.steps) {
    steps.push(entry(s, lowered));
    if (s.composite?.body) collectSteps(s.composite.body, lowered, steps, edges);
  }
}

/** Builds the manifest from the IR and what lowering produced. */
export function buildStepManifest(
  doc: IrDocument,
  lowered: LoweredWorkflow,
  express: ManifestExpressFacts,
  serialised: Pick<SerialisedDefinition, 'placeholders' | 'bedrockModels'> = serialisedDefinition(lowered.definition),
): StepManifest {
  const { placeholders } = serialised;
  const steps: StepManifestEntry[] = [];
  const edges: [string, string][] = [];
  collectSteps(doc.workflow, lowered, steps, edges);
  const deployment = doc.deployment ?? {};
  const requested = deployment.express === true;
  return {
    version: 1,
    workflow: doc.name,
    displayName: doc.displayName ?? doc.name,
    format: doc.format,
    ...(doc.file !== undefined ? { file: doc.file } : {}),
    type: express.express ? 'EXPRESS' : 'STANDARD',
    steps,
    edges,
    inputSchema: doc.inputSchema ?? { fields: [] },
    placeholders: [...placeholders],
    secrets: [...new Set(steps.flatMap((s) => s.secrets))].sort(),
    secretsByHandler: secretsByHandler(steps, deployment.secrets ?? [], placeholders),
    express: { requested, ...(requested && express.blocker !== undefined ? { blocker: express.blocker } : {}) },
    triggers: deployment.triggers ?? [],
    mcpServers: deployment.mcpServers ?? {},
    bedrockModels: [...serialised.bedrockModels],
  };
}

function entry(s: IrStep, lowered: LoweredWorkflow): StepManifestEntry {
  const states = lowered.stepStates.get(s) ?? [s.id];
  const parent = lowered.parents.get(s);
  const handler = HANDLER[s.kind];
  const functions = handler === null ? [] : [kindResource(handler)];
  if (s.kind === 'model' && s.tools.length > 0) functions.push(kindResource('tool'));
  // Assigned in the manifest's key order rather than spread from conditional literals (an object per
  // optional field, copied through the generic spread, for every step).
  const out: Record<string, unknown> = { id: s.id, kind: s.kind, identity: s.identity, state: states[0]!, states };
  if (parent) out.parent = parent.id;
  if (s.location) out.location = s.location;
  if (s.output !== undefined) out.output = s.output;
  out.handler = handler;
  out.functions = functions;
  out.tools = s.tools;
  out.secrets = s.secrets;
  if (s.budget) out.budget = s.budget;
  return out as unknown as StepManifestEntry;
}

/** Records that `handler` reads secret `id` (a function, not a closure per call: see scheduleDag's DagScheduler). */
function addSecret(out: Map<StepHandlerId, Set<string>>, handler: StepHandlerId, id: string): void {
  let ids = out.get(handler);
  if (!ids) out.set(handler, (ids = new Set()));
  ids.add(id);
}

/**
 * Each step's secrets under its handler; a document-level id no step lists under every step handler
 * the definition invokes (which of them resolves it is only known at run time).
 */
function secretsByHandler(
  steps: readonly StepManifestEntry[],
  documentSecrets: readonly string[],
  placeholders: readonly string[],
): Partial<Record<StepHandlerId, string[]>> {
  const out = new Map<StepHandlerId, Set<string>>();
  const listed = new Set<string>();
  for (const s of steps) {
    const handler = stepHandlerIdOf(s.handler);
    if (handler === undefined) continue;
    for (const id of s.secrets) {
      addSecret(out, handler, id);
      listed.add(id);
    }
  }
  const invoked = placeholders
    .map((p) => LAMBDA_PLACEHOLDERS[p.replace(/^\$\{|\}$/g, '')])
    .filter((h): h is StepHandlerId => h !== undefined && (STEP_HANDLERS as readonly string[]).includes(h));
  for (const id of documentSecrets) {
    if (listed.has(id)) continue;
    for (const h of invoked) addSecret(out, h, id);
  }
  // Handlers in the table's order, ids sorted: the manifest reads the same for the same workflow.
  return Object.fromEntries(STEP_HANDLERS.filter((h) => out.has(h)).map((h) => [h, [...out.get(h)!].sort()]));
}
