// Code workflows → IR. A Kortyx workflow becomes one `code_graph` step: its nodes run in the
// function handler (which imports the module and calls the node by name), its edges become Choices
// on what the node returned. Pure: the module was imported by the caller; only its data is read here.
import { callCycle } from '../checks/cycle.js';
import { stepIdentity } from '../ir/stepIdentity.js';
import { StepforgeError, type Diagnostic } from '@stepforge/contract';
import type { IrCodeChild, IrCodeEdge, IrCodeNode, IrDocument, IrRetry } from '../ir/Ir.js';
import { workflowSlug } from '../workflowSlug.js';
import type { CodeWorkflowValue } from './agentSdk.js';
import { sdkToIr } from './sdkToIr.js';
import { CODE_WORKFLOW, END_NODE, START_NODE, isWorkflowCall, validateWorkflow, type WorkflowDefinition } from './defineWorkflow.js';

/** Bound on a Kortyx workflow's node runs (its cycles), as the agent SDK's state graphs default to. */
export const KORTYX_MAX_ITERATIONS = 25;

/** The exports of a module that are code workflows, by export name. */
export function codeWorkflowExports(mod: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(mod).filter((k) => {
    const v = mod[k];
    return v !== null && typeof v === 'object' && (v as Record<symbol, unknown>)[CODE_WORKFLOW] !== undefined;
  });
}

/** Options of codeToIr: where the module is (as the function handler will import it) and which export. */
export interface CodeToIrOptions {
  readonly module: string;
  readonly exportName: string;
  readonly file?: string;
  /** An agent SDK stateGraph's run options (see SdkToIrOptions). */
  readonly start?: string;
  readonly maxIterations?: number;
  /** The module's exports: where a node's useWorkflow child is found (its export name); without them the child's id stands for it. */
  readonly exports?: Readonly<Record<string, unknown>>;
}

/** Compiles an exported Kortyx workflow (or agent SDK workflow, see sdkToIr) to IR; invalid definitions are `invalid_workflow` errors naming the path. */
export function codeToIr(value: unknown, options: CodeToIrOptions): IrDocument {
  const location = { file: options.file ?? options.module, line: 1, column: 1 };
  const kind = value !== null && typeof value === 'object' ? (value as Record<symbol, unknown>)[CODE_WORKFLOW] : undefined;
  if (kind === 'workflow' || kind === 'parallel' || kind === 'stateGraph') return sdkToIr(value as CodeWorkflowValue, options);
  if (kind !== 'kortyx') {
    throw new StepforgeError('invalid_document', `export '${options.exportName}' is not a workflow`, {
      location,
      hint: 'export the result of defineWorkflow({...}) from the module, and name it with --export',
    });
  }
  const checked = validateWorkflow(value);
  if (!checked.ok) {
    const first = checked.errors[0]!;
    throw new StepforgeError('invalid_workflow', `export '${options.exportName}': ${first.path.join('.')}: ${first.message}`, {
      location,
      details: { errors: checked.errors },
    });
  }
  const def: WorkflowDefinition = checked.value;
  const nodes: IrCodeNode[] = Object.entries(def.nodes).map(([name, n]) => ({
    name,
    ...(n.params !== undefined ? { params: n.params } : {}),
    ...(n.behavior?.retry ? { retry: kortyxRetry(n.behavior.retry) } : {}),
    ...(isWorkflowCall(n.run) ? { child: childOf(n.run.child, name, def, options, location) } : {}),
  }));
  const edges: IrCodeEdge[] = [];
  let start = '';
  for (const e of def.edges) {
    const when = e[2]?.when;
    if (e[0] === START_NODE) {
      start = e[1];
      continue;
    }
    edges.push({ from: e[0], to: e[1], ...(when !== undefined ? { when } : {}) });
  }
  if (start === END_NODE)
    throw new StepforgeError(
      'invalid_workflow',
      `export '${options.exportName}': the workflow goes from ${START_NODE} straight to ${END_NODE}`,
      { location },
    );
  const config = { module: options.module, export: options.exportName, nodes: nodes.map((n) => n.name), edges };
  const name = workflowSlug(def.id);
  return {
    name,
    displayName: def.description ? `${def.id}: ${def.description}` : def.id,
    format: 'code',
    file: options.file,
    workflow: {
      steps: [
        {
          id: def.id,
          kind: 'code_graph',
          identity: stepIdentity('code_graph', { ...config, version: def.version }, []),
          config,
          tools: [],
          secrets: [],
          location,
          composite: {
            graph: {
              module: options.module,
              exportName: options.exportName,
              nodes,
              edges,
              start,
              maxIterations: KORTYX_MAX_ITERATIONS,
              ...handoffsOf(def, options),
            },
          },
        },
      ],
      edges: [],
      resultStep: 0,
    },
  };
}

/**
 * The workflows a compiled code workflow starts as nested executions, each to be registered or
 * deployed beside it: the children its nodes call with useWorkflow, then the workflows it may hand
 * the run over to (transitionTo), without repeats.
 */
export function codeChildren(doc: IrDocument): IrCodeChild[] {
  const all = doc.workflow.steps.flatMap((s) => [
    ...(s.composite?.graph?.nodes ?? []).flatMap((n) => (n.child ? [n.child] : [])),
    ...(s.composite?.graph?.handoffs ?? []),
  ]);
  return all.filter((c, i) => all.findIndex((o) => o.name === c.name) === i);
}

/**
 * The workflows a Kortyx workflow's nodes may hand the run over to with `transitionTo`: the other
 * Kortyx workflows the module exports, by id. Kortyx's orchestrator looks the id up in its workflow
 * registry; here the module is the registry, because each of those workflows is compiled, registered
 * and deployed as a state machine beside this one, which the hand-off starts by name.
 */
function handoffsOf(def: WorkflowDefinition, options: CodeToIrOptions): { handoffs?: IrCodeChild[] } {
  if (options.exports === undefined) return {};
  const found: IrCodeChild[] = [];
  for (const [exportName, v] of Object.entries(options.exports)) {
    if (v === null || typeof v !== 'object' || (v as Record<symbol, unknown>)[CODE_WORKFLOW] !== 'kortyx') continue;
    const id = (v as { id?: unknown }).id;
    if (typeof id !== 'string' || id === def.id || found.some((f) => f.id === id)) continue;
    found.push({ name: workflowSlug(id), id, exportName });
  }
  return found.length > 0 ? { handoffs: found } : {};
}

/**
 * The child a node's useWorkflow names. It runs as its own state machine, which the CLI registers
 * and the CDK app deploys beside the parent by compiling the module export that holds it: a child
 * the module does not export, or the workflow calling itself, is refused (invalid_workflow).
 */
function childOf(
  child: WorkflowDefinition,
  node: string,
  parent: WorkflowDefinition,
  options: CodeToIrOptions,
  location: { file: string; line: number; column: number },
): IrCodeChild {
  const cycle = callCycle(child, parent.id, (w) => w.id, useWorkflowChildren, [parent.id]);
  if (cycle !== undefined) {
    throw new StepforgeError(
      'invalid_workflow',
      `export '${options.exportName}': node '${node}' calls workflow '${child.id}' with useWorkflow, which leads back to '${parent.id}' (${cycle.join(' → ')}): nested executions would start one another without end`,
      { location },
    );
  }
  let exportName: string | undefined = child.id;
  if (options.exports !== undefined) {
    exportName = Object.keys(options.exports).find((k) => options.exports![k] === child);
    if (exportName === undefined) {
      throw new StepforgeError(
        'invalid_workflow',
        `export '${options.exportName}': node '${node}' calls workflow '${child.id}' with useWorkflow, which the module does not export`,
        {
          location,
          hint: `export the child workflow from the module (export const ... = defineWorkflow({ id: '${child.id}', ... })) so it is compiled as its own state machine`,
        },
      );
    }
  }
  return { name: workflowSlug(child.id), id: child.id, exportName };
}

/** The workflows a Kortyx workflow's nodes start with useWorkflow. */
function useWorkflowChildren(wf: WorkflowDefinition): WorkflowDefinition[] {
  return Object.values(wf.nodes ?? {}).flatMap((n) => (isWorkflowCall(n?.run) ? [n.run.child] : []));
}

/** `behavior.retry`: `maxAttempts` total attempts, `delayMs` apart (Kortyx waits a fixed delay: no backoff, no jitter). */
function kortyxRetry(r: { maxAttempts?: number; delayMs?: number }): IrRetry {
  return {
    maxAttempts: Math.max(1, r.maxAttempts ?? 1),
    intervalSeconds: Math.max(1, Math.ceil((r.delayMs ?? 1000) / 1000)),
    backoffRate: 1,
    jitter: false,
  };
}

/**
 * What a Kortyx workflow's edges mean there and not here, as warnings: a node with a plain edge beside
 * `when` edges, or with two plain edges. Kortyx gives plain edges to LangGraph's addEdge, and
 * LangGraph runs every edge that leaves a node; here a node's edges are one Choice, whose plain edge
 * is its Default (the first, when there are two).
 */
export function kortyxEdgeWarnings(ir: IrDocument): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const step of ir.workflow.steps) {
    const graph = step.composite?.graph;
    if (graph === undefined) continue;
    const byNode = new Map<string, IrCodeEdge[]>();
    for (const e of graph.edges) {
      const list = byNode.get(e.from);
      if (list === undefined) byNode.set(e.from, [e]);
      else list.push(e);
    }
    for (const [node, edges] of byNode) {
      const plain = edges.filter((e) => e.when === undefined && e.to !== END_NODE);
      const conditional = edges.filter((e) => e.when !== undefined);
      if (plain.length === 0 || (conditional.length === 0 && plain.length === 1)) continue;
      const them = plain.map((e) => `'${e.to}'`).join(', ');
      const message =
        conditional.length > 0
          ? `node '${node}' has a plain edge to ${them} beside when edges: Kortyx (LangGraph) runs every edge that leaves a node, so the plain edge's node and the matched when edge's node would both run; here the edges are one choice, and ${them} runs only when no when edge matches. Give it a when, or route in the node`
          : `node '${node}' has plain edges to ${them}: Kortyx (LangGraph) runs every edge that leaves a node, so all of them would run; here the edges are one choice, and only '${plain[0]!.to}' runs. Route in the node, or run them as a parallel step`;
      out.push({
        severity: 'warning',
        code: 'parallel_edges',
        message,
        ...(step.location !== undefined ? { location: step.location } : {}),
      });
    }
  }
  return out;
}
