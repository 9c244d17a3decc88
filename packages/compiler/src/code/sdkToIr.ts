// The agent SDK's builders (`workflow`, `parallel`, `stateGraph`) → IR: one `code_graph` step whose
// `sdk` part records the structure; the agents run in the model handler, the user's functions
// (`when`, `transform`, graph nodes, `inputFn` / `mergeFn`, routers) in the function handler,
// which finds them again in the module by the names and indices recorded here.
import { stepIdentity } from '../ir/stepIdentity.js';
import { StepforgeError, type SourceLocation } from '@stepforge/contract';
import type { IrDocument, IrRetry, IrSdkAgent, IrSdkFlow, IrSdkGraphNode, IrSdkItem, IrSdkStep } from '../ir/Ir.js';
import { workflowSlug } from '../workflowSlug.js';
import { DEFAULT_MAX_ITERATIONS, END, type Agent, type CodeWorkflowValue, type StateGraph, type WorkflowStepSpec } from './agentSdk.js';

/** Options of sdkToIr: the module the handler imports, the export, and a state graph's run options. */
export interface SdkToIrOptions {
  readonly module: string;
  readonly exportName: string;
  readonly file?: string;
  /** stateGraph: the node to start at (default: the first one added). */
  readonly start?: string;
  /** stateGraph: node runs before it stops with terminatedBy "maxIterations" (default 25). */
  readonly maxIterations?: number;
}

/** Compiles an exported agent SDK workflow; a malformed one is `invalid_workflow` naming the export and the place. */
export function sdkToIr(value: CodeWorkflowValue, options: SdkToIrOptions): IrDocument {
  const location: SourceLocation = { file: options.file ?? options.module, line: 1, column: 1 };
  const bad = (where: string, message: string): never => {
    throw new StepforgeError('invalid_workflow', `export '${options.exportName}': ${where}: ${message}`, { location });
  };
  const names = new Set<string>();
  // State names must be unique: a second agent of the same name is the name with its position.
  const unique = (name: string, fallback: string) => {
    const n = names.has(name) ? `${name} (${fallback})` : name;
    names.add(n);
    return n;
  };
  const toStep = (s: unknown, path: number[], where: string, fallback: string, inGroup: boolean): IrSdkStep => {
    const spec = isAgent(s) ? ({ agent: s } as WorkflowStepSpec) : (s as WorkflowStepSpec);
    if (spec === null || typeof spec !== 'object' || !isAgent(spec.agent))
      return bad(where, 'a step is an agent(...), a parallel([...]) group, or { agent, when, transform, retries, retryDelay }');
    for (const k of ['when', 'transform'] as const)
      if (spec[k] !== undefined && typeof spec[k] !== 'function') bad(`${where}.${k}`, `${k} must be a function`);
    const retries = spec.retries ?? 0;
    if (!Number.isInteger(retries) || retries < 0) bad(`${where}.retries`, 'retries must be a non-negative integer');
    const delay = spec.retryDelay ?? 1000;
    if (typeof delay !== 'number' || delay < 0) bad(`${where}.retryDelay`, 'retryDelay must be a non-negative number of milliseconds');
    const agent = sdkAgent(spec.agent, spec.name ?? fallback);
    if (inGroup && agent.tools.length > 0)
      bad(where, 'an agent granted tools in a parallel branch is not supported yet (its agent loop would have to run inside the branch)');
    return {
      name: unique(spec.name ?? agent.name, fallback),
      path,
      agent,
      when: spec.when !== undefined,
      transform: spec.transform !== undefined,
      ...(retries > 0 ? { retry: sdkRetry(retries, delay) } : {}),
      ...(spec.input !== undefined ? { input: spec.input } : {}),
    };
  };
  const group = (steps: unknown, path: number[], where: string): IrSdkStep[] => {
    if (!Array.isArray(steps) || steps.length === 0) return bad(where, 'a parallel group needs at least one step');
    return steps.map((b, j) => toStep(b, [...path, j], `${where}.steps.${j}`, `branch ${j + 1}`, true));
  };

  let sdk: IrSdkFlow;
  let id: string;
  if (value.kind === 'workflow') {
    if (!Array.isArray(value.steps) || value.steps.length === 0) bad('steps', 'a workflow needs at least one step');
    const items: IrSdkItem[] = value.steps.map((s, i) =>
      isGroup(s)
        ? { kind: 'parallel', name: unique(`parallel ${i + 1}`, `step ${i + 1}`), branches: group(s.steps, [i], `steps.${i}`) }
        : { kind: 'step', step: toStep(s, [i], `steps.${i}`, `step ${i + 1}`, false) },
    );
    sdk = { module: options.module, exportName: options.exportName, shape: 'workflow', items };
    id = options.exportName;
  } else if (value.kind === 'parallel') {
    sdk = { module: options.module, exportName: options.exportName, shape: 'parallel', branches: group(value.steps, [], '(root)') };
    id = options.exportName;
  } else {
    const g = value as StateGraph<unknown>;
    if (g.nodes.size === 0) bad('nodes', 'a state graph needs at least one node (addNode)');
    const nodes: IrSdkGraphNode[] = [];
    for (const [name, node] of g.nodes) {
      if (name === END) bad(`nodes.${name}`, `'${END}' is where a graph ends; it cannot be a node`);
      names.add(name);
      const agentNode =
        typeof node === 'object' && node !== null && (node as { kind?: string }).kind === 'agentNode'
          ? (node as { agent: Agent; inputFn: unknown; mergeFn: unknown })
          : undefined;
      if (!agentNode && typeof node !== 'function')
        bad(`nodes.${name}`, 'a node is a function over the state or agentNode(agent, inputFn, mergeFn)');
      if (agentNode && (typeof agentNode.inputFn !== 'function' || typeof agentNode.mergeFn !== 'function' || !isAgent(agentNode.agent)))
        bad(`nodes.${name}`, 'agentNode takes (agent, inputFn, mergeFn)');
      const edge = g.edges.get(name);
      if (edge !== undefined && typeof edge !== 'function' && typeof edge !== 'string')
        bad(`edges.${name}`, 'an edge goes to a node name, END, or a router function');
      if (typeof edge === 'string' && edge !== END && !g.nodes.has(edge)) bad(`edges.${name}`, `edge to unknown node '${edge}'`);
      nodes.push({
        name,
        ...(agentNode ? { agent: sdkAgent(agentNode.agent, name) } : {}),
        ...(edge === undefined ? {} : typeof edge === 'function' ? { next: { router: true as const } } : { next: { to: edge } }),
      });
    }
    for (const from of g.edges.keys()) if (!g.nodes.has(from)) bad(`edges.${from}`, `edge from unknown node '${from}'`);
    const start = options.start ?? nodes[0]!.name;
    if (!g.nodes.has(start)) bad('start', `the graph starts at unknown node '${start}'`);
    const max = options.maxIterations ?? DEFAULT_MAX_ITERATIONS;
    if (!Number.isInteger(max) || max < 1) bad('maxIterations', 'maxIterations must be a positive integer');
    sdk = { module: options.module, exportName: options.exportName, shape: 'stateGraph', nodes, start, maxIterations: max };
    id = options.exportName;
  }
  const config = { module: options.module, export: options.exportName, shape: sdk.shape };
  return {
    name: workflowSlug(id),
    displayName: `${id} (${sdk.shape})`,
    format: 'code',
    file: options.file,
    workflow: {
      steps: [
        {
          id,
          kind: 'code_graph',
          identity: stepIdentity('code_graph', { ...config, sdk: JSON.stringify(sdk) }, []),
          config,
          tools: [],
          secrets: [],
          location,
          composite: { sdk },
        },
      ],
      edges: [],
      resultStep: 0,
    },
  };
}

function isAgent(v: unknown): v is Agent {
  return v !== null && typeof v === 'object' && (v as { kind?: unknown }).kind === 'agent';
}

function isGroup(v: unknown): v is { steps: unknown[] } {
  return v !== null && typeof v === 'object' && (v as { kind?: unknown }).kind === 'parallel';
}

function sdkAgent(a: Agent, fallback: string): IrSdkAgent {
  return {
    name: a.name ?? fallback,
    ...(a.model !== undefined ? { model: a.model } : {}),
    ...(a.instructions !== undefined ? { instructions: a.instructions } : {}),
    tools: [...a.tools],
  };
}

/** `retries` after the first attempt, `retryDelay` ms apart (rounded up to whole seconds, the ASL minimum 1 s). */
function sdkRetry(retries: number, delayMs: number): IrRetry {
  return { maxAttempts: retries + 1, intervalSeconds: Math.max(1, Math.ceil(delayMs / 1000)), backoffRate: 1, jitter: false };
}
