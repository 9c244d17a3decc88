// The agent SDK's code API (`agent`, `workflow`, `parallel`, `stateGraph`, `agentNode`, `END`) as
// data builders: each records its structure and the user's function references. Nothing runs here:
// the code front-end compiles the structure, and `.run()` hands the workflow to the runner the
// `stepforge` entry installs (the embedded stack), so this module stays pure.
import { LIVE_RELOAD, LIVE_RELOADED, type LiveReload } from '@stepforge/contract';
import { CODE_WORKFLOW } from './defineWorkflow.js';

/** Where a graph goes when it is done. */
export const END = '__end__';

/** Our agent handle: a model with instructions and the tools it is granted. */
export interface Agent {
  readonly kind: 'agent';
  readonly name?: string;
  readonly model?: string;
  readonly instructions?: string;
  readonly tools: readonly string[];
}

/** `agent({model, instructions, tools})`. */
export function agent(spec: { name?: string; model?: string; instructions?: string; tools?: readonly string[] }): Agent {
  return { kind: 'agent', ...spec, tools: [...(spec.tools ?? [])] };
}

/** A workflow step with its options. */
export interface WorkflowStepSpec {
  readonly agent: Agent;
  readonly name?: string;
  readonly when?: (prev: unknown) => unknown;
  readonly transform?: (prev: unknown) => unknown;
  /** Retries after the first attempt (default 0). */
  readonly retries?: number;
  /** Milliseconds between attempts (default 1000). */
  readonly retryDelay?: number;
  /** Inside a parallel group: this branch's input instead of the group's. */
  readonly input?: unknown;
}

export type WorkflowStep = Agent | ParallelGroup | WorkflowStepSpec;

/** The runner `.run()` uses; installed by the `stepforge` package entry. */
export type CodeRunner = (workflow: CodeWorkflowValue, input: unknown, options?: Record<string, unknown>) => Promise<unknown>;
let runner: CodeRunner | undefined;
/** Installs the runner `.run()` calls (the embedded stack, or AWS when configured). */
export function setCodeRunner(r: CodeRunner | undefined): void {
  runner = r;
}

function run(w: CodeWorkflowValue, input: unknown, options?: Record<string, unknown>): Promise<unknown> {
  // Built while a process loads the program again to find its workflows: the program stops here, no run starts.
  if ((w as unknown as Record<symbol, unknown>)[LIVE_RELOADED] === true) {
    (globalThis as { [LIVE_RELOAD]?: LiveReload })[LIVE_RELOAD]?.ran(w);
    return new Promise(() => {});
  }
  if (!runner) {
    const e = Object.assign(
      new Error('no runner: import workflow builders from "stepforge" (its entry starts the embedded stack) to call .run()'),
      { name: 'runner_unavailable', code: 'runner_unavailable' },
    );
    return Promise.reject(e);
  }
  return runner(w, input, options);
}

/**
 * Stepforge's option to `.run()` (the SDKs' `.run()` takes none): `idempotencyKey` runs the workflow
 * on the project's stack (`.stepforge/`) rather than an in-memory one, and names its run. The same
 * key again (in this program or a later run of it) answers the run's result without running it
 * again; when that run failed, it is retried, reusing the results of the nodes that finished.
 */
export interface CodeRunOptions {
  readonly idempotencyKey?: string;
}

/** A `parallel([...])` group: every branch runs; failures are isolated. */
export interface ParallelGroup {
  readonly [CODE_WORKFLOW]: 'parallel';
  readonly kind: 'parallel';
  readonly steps: readonly (Agent | WorkflowStepSpec)[];
  run(input: unknown, options?: CodeRunOptions): Promise<{ results: unknown[]; fulfilled: number; rejected: number }>;
}

/** A `workflow([...])`: steps in order. */
export interface SequentialWorkflow {
  readonly [CODE_WORKFLOW]: 'workflow';
  readonly kind: 'workflow';
  readonly steps: readonly WorkflowStep[];
  run(input: unknown, options?: CodeRunOptions): Promise<{ output: unknown; steps: unknown[]; stoppedEarly: boolean }>;
}

/** A state graph's node: a function over the state, or an agent node. */
export type GraphNode<S> = ((state: S) => Partial<S> | Promise<Partial<S>>) | AgentNode<S>;

/** `agentNode(agent, inputFn, mergeFn)`: the agent gets inputFn(state); mergeFn(state, output) is merged in. */
export interface AgentNode<S> {
  readonly kind: 'agentNode';
  readonly agent: Agent;
  readonly inputFn: (state: S) => unknown;
  readonly mergeFn: (state: S, output: unknown) => Partial<S>;
}

export function agentNode<S>(a: Agent, inputFn: (state: S) => unknown, mergeFn: (state: S, output: unknown) => Partial<S>): AgentNode<S> {
  return { kind: 'agentNode', agent: a, inputFn, mergeFn };
}

/** A graph edge's target: a node name, END, or a router returning one. */
export type EdgeTarget<S> = string | ((state: S) => string | Promise<string>);

/** A `stateGraph<S>()`: nodes, edges (fixed or routed), run from a start node. */
export interface StateGraph<S> {
  readonly [CODE_WORKFLOW]: 'stateGraph';
  readonly kind: 'stateGraph';
  readonly nodes: ReadonlyMap<string, GraphNode<S>>;
  readonly edges: ReadonlyMap<string, EdgeTarget<S>>;
  addNode(name: string, node: GraphNode<S>): StateGraph<S>;
  addEdge(from: string, to: EdgeTarget<S>): StateGraph<S>;
  run(
    start: string,
    initialState: S,
    options?: { maxIterations?: number } & CodeRunOptions,
  ): Promise<{ state: S; steps: unknown[]; iterations: number; terminatedBy: 'end' | 'maxIterations' | 'noEdge' }>;
}

export type CodeWorkflowValue = SequentialWorkflow | ParallelGroup | StateGraph<any>;

/** Where a workflow value was built (`file:line:column` of the builder's caller), if known. */
export const CODE_CALL_SITE = Symbol.for('stepforge.codeCallSite');

// The builder's caller: the first stack frame outside this module. It tells apart workflows of the
// same structure in one program, and finds the same one again in a later run of the program.
function callSite(): string | undefined {
  const frames = (new Error().stack ?? '')
    .split('\n')
    .slice(1)
    .map((l) => l.trim());
  const here = frames[0]?.replace(/^at .*?\(?(\S+?):\d+:\d+\)?$/, '$1');
  return frames.find((f) => here === undefined || !f.includes(here))?.replace(/^at (.*\()?|\)$/g, '');
}

const mark = <T extends object>(o: T, kind: string): T => {
  Object.defineProperty(o, CODE_CALL_SITE, { value: callSite(), enumerable: false });
  const reload = (globalThis as { [LIVE_RELOAD]?: LiveReload })[LIVE_RELOAD];
  if (reload !== undefined) {
    Object.defineProperty(o, LIVE_RELOADED, { value: true, enumerable: false });
    reload.built.push(o);
  }
  return Object.defineProperty(o, CODE_WORKFLOW, { value: kind, enumerable: false });
};

export function workflow(steps: readonly WorkflowStep[]): SequentialWorkflow {
  const w = mark({ kind: 'workflow', steps: [...steps] } as unknown as SequentialWorkflow, 'workflow');
  (w as { run: unknown }).run = (input: unknown, options?: CodeRunOptions) => run(w, input, { ...options });
  return w;
}

export function parallel(steps: readonly (Agent | WorkflowStepSpec)[]): ParallelGroup {
  const g = mark({ kind: 'parallel', steps: [...steps] } as unknown as ParallelGroup, 'parallel');
  (g as { run: unknown }).run = (input: unknown, options?: CodeRunOptions) => run(g, input, { ...options });
  return g;
}

/** Default bound on a state graph's iterations (node runs). */
export const DEFAULT_MAX_ITERATIONS = 25;

export function stateGraph<S = Record<string, unknown>>(): StateGraph<S> {
  const nodes = new Map<string, GraphNode<S>>();
  const edges = new Map<string, EdgeTarget<S>>();
  const g = mark({ kind: 'stateGraph', nodes, edges } as unknown as StateGraph<S>, 'stateGraph');
  Object.assign(g, {
    addNode(name: string, node: GraphNode<S>) {
      nodes.set(name, node);
      return g;
    },
    addEdge(from: string, to: EdgeTarget<S>) {
      edges.set(from, to);
      return g;
    },
    run(start: string, initialState: S, options?: { maxIterations?: number } & CodeRunOptions) {
      return run(g, initialState, { start, ...options });
    },
  });
  return g;
}
