// Kortyx's code API: a workflow is plain data (nodes, edges) holding references to node functions.
// defineWorkflow records it as written; the code front-end (codeToIr) compiles it, and the function
// handler calls the node functions by name when a run reaches them.

/** What a node function returns (a subset of Kortyx's NodeResult). */
export interface NodeResult {
  /** Merged into the run state and forwarded as the next node's input. */
  readonly data?: Record<string, unknown>;
  readonly ui?: { readonly message?: string; readonly structured?: Record<string, unknown> };
  /** An edge's `when` matches `condition` first, then `intent`. */
  readonly condition?: string;
  readonly intent?: string;
  readonly transitionTo?: string;
}

/** A node function: `({input, params}) => NodeResult`. */
export type NodeFn = (args: { input: any; params: any }) => NodeResult | Promise<NodeResult> | undefined | Promise<undefined>;

/** `behavior.retry`: `maxAttempts` total attempts, `delayMs` between them. */
export interface NodeBehavior {
  readonly checkpoint?: boolean;
  readonly retry?: { readonly maxAttempts?: number; readonly delayMs?: number };
  readonly prompt?: string;
}

/** One node of a Kortyx workflow. */
export interface WorkflowNodeDef {
  /** The node function, or `useWorkflow(child, input?)`: the node runs that child workflow. */
  readonly run: NodeFn | string | WorkflowCall;
  readonly params?: Record<string, unknown>;
  readonly metadata?: Record<string, unknown>;
  readonly behavior?: NodeBehavior;
}

/** `[from, to]` or `[from, to, {when}]`; `__start__` and `__end__` are the graph's ends. */
export type WorkflowEdge = readonly [string, string] | readonly [string, string, { readonly when?: string }];

/** A schema with zod's `safeParse` (the workflow's inputSchema / outputSchema). */
export interface SchemaLike {
  safeParse(v: unknown): {
    success: boolean;
    data?: unknown;
    error?: { issues?: readonly { path: readonly PropertyKey[]; message: string }[] };
  };
}

/** A Kortyx workflow definition as its authors write it. */
export interface WorkflowDefinition {
  readonly id: string;
  readonly version: string;
  readonly description?: string;
  readonly inputSchema?: SchemaLike;
  readonly outputSchema?: SchemaLike;
  readonly nodes: Readonly<Record<string, WorkflowNodeDef>>;
  readonly edges: readonly WorkflowEdge[];
  readonly metadata?: Record<string, unknown>;
}

/** Marks the data a code module exports as a workflow (how the front-end finds them among its exports). */
export const CODE_WORKFLOW = Symbol.for('stepforge.codeWorkflow');

/** A defined Kortyx workflow: the definition, marked. */
export type KortyxWorkflow = WorkflowDefinition & { readonly [CODE_WORKFLOW]: 'kortyx' };

export const START_NODE = '__start__';
export const END_NODE = '__end__';

/** One problem validateWorkflow found, at a path into the definition. */
export interface WorkflowValidationError {
  readonly path: (string | number)[];
  readonly message: string;
  readonly code: string;
}

/** Checks a candidate definition: `{ok: true, value}` or `{ok: false, errors}`, as Kortyx's validateWorkflow answers. */
export function validateWorkflow(
  candidate: unknown,
): { ok: true; value: WorkflowDefinition } | { ok: false; errors: WorkflowValidationError[] } {
  const errors: WorkflowValidationError[] = [];
  const err = (path: (string | number)[], message: string, code = 'invalid_type') => errors.push({ path, message, code });
  if (candidate === null || typeof candidate !== 'object')
    return { ok: false, errors: [{ path: [], message: 'a workflow definition must be an object', code: 'invalid_type' }] };
  const c = candidate as Record<string, unknown>;
  if (typeof c.id !== 'string' || c.id === '') err(['id'], 'id must be a non-empty string');
  if (typeof c.version !== 'string') err(['version'], 'version must be a string');
  const nodes = c.nodes;
  if (nodes === null || typeof nodes !== 'object' || Array.isArray(nodes)) err(['nodes'], 'nodes must be an object of node definitions');
  const names = new Set(nodes && typeof nodes === 'object' ? Object.keys(nodes) : []);
  for (const n of names) {
    const def = (nodes as Record<string, unknown>)[n] as Record<string, unknown> | null;
    if (def === null || typeof def !== 'object') {
      err(['nodes', n], `node '${n}' must be an object with run`);
      continue;
    }
    if (isWorkflowCall(def.run)) {
      const child = def.run.child;
      if (child === null || typeof child !== 'object' || typeof (child as { id?: unknown }).id !== 'string')
        err(
          ['nodes', n, 'run'],
          `node '${n}': useWorkflow needs the child workflow itself (the value defineWorkflow returned), not its id`,
          'custom',
        );
    } else if (typeof def.run !== 'function' && typeof def.run !== 'string')
      err(['nodes', n, 'run'], `node '${n}' needs run: a node function or useWorkflow(child, input)`);
    const checkpoint = (def.behavior as { checkpoint?: unknown } | undefined)?.checkpoint;
    if (checkpoint !== undefined && typeof checkpoint !== 'boolean')
      err(['nodes', n, 'behavior', 'checkpoint'], 'checkpoint must be true or false');
    const retry = (def.behavior as { retry?: Record<string, unknown> } | undefined)?.retry;
    if (retry !== undefined) {
      for (const k of ['maxAttempts', 'delayMs'] as const) {
        const v = retry[k];
        if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < 0))
          err(['nodes', n, 'behavior', 'retry', k], `${k} must be a non-negative integer`);
      }
    }
    if (n === START_NODE || n === END_NODE) err(['nodes', n], `'${n}' is reserved for the graph's ends`, 'custom');
  }
  if (!Array.isArray(c.edges)) err(['edges'], 'edges must be a list of [from, to] or [from, to, {when}]');
  else {
    let starts = 0;
    c.edges.forEach((e: unknown, i: number) => {
      if (!Array.isArray(e) || e.length < 2 || e.length > 3 || typeof e[0] !== 'string' || typeof e[1] !== 'string') {
        err(['edges', i], 'an edge is [from, to] or [from, to, {when}]');
        return;
      }
      const [from, to, opts] = e as [string, string, unknown];
      if (from === START_NODE) starts++;
      if (from !== START_NODE && !names.has(from)) err(['edges', i, 0], `edge from unknown node '${from}'`, 'custom');
      if (to !== END_NODE && !names.has(to)) err(['edges', i, 1], `edge to unknown node '${to}'`, 'custom');
      if (
        opts !== undefined &&
        (opts === null ||
          typeof opts !== 'object' ||
          ((opts as { when?: unknown }).when !== undefined && typeof (opts as { when?: unknown }).when !== 'string'))
      )
        err(['edges', i, 2], 'edge options are {when: "<condition or intent>"}');
    });
    if (starts !== 1) err(['edges'], `exactly one edge must leave '${START_NODE}' (found ${starts})`, 'custom');
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: candidate as WorkflowDefinition };
}

/** Defines a Kortyx workflow; throws `invalid_workflow` (with every problem, by path) when it is not one. */
export function defineWorkflow<T extends WorkflowDefinition>(definition: T): T & KortyxWorkflow {
  const checked = validateWorkflow(definition);
  if (!checked.ok) {
    const e = new Error(
      `invalid workflow '${String((definition as { id?: unknown }).id)}': ${checked.errors.map((x) => `${x.path.join('.') || '(root)'}: ${x.message}`).join('; ')}`,
    );
    e.name = 'invalid_workflow';
    // The id and node names let whoever reports it place it in the source and say what to write.
    const nodes = (definition as { nodes?: unknown }).nodes;
    throw Object.assign(e, {
      code: 'invalid_workflow',
      errors: checked.errors,
      workflowId: typeof definition?.id === 'string' ? definition.id : undefined,
      nodeNames: nodes !== null && typeof nodes === 'object' && !Array.isArray(nodes) ? Object.keys(nodes) : [],
    });
  }
  return Object.defineProperty({ ...definition }, CODE_WORKFLOW, { value: 'kortyx', enumerable: false }) as T & KortyxWorkflow;
}

/** Marks a node's `run` as a child-workflow call (useWorkflow) rather than a node function. */
export const WORKFLOW_CALL = Symbol.for('stepforge.workflowCall');

/**
 * A node's call of a child workflow: recorded as data when the workflow is defined, so the
 * compiler can lower it to a nested execution (a function in a node's body is opaque to it).
 * `input` is the child's input: a function of the run state, a fixed value, or (absent) the run state.
 */
export interface WorkflowCall {
  readonly [WORKFLOW_CALL]: true;
  readonly workflow: string;
  readonly child: WorkflowDefinition;
  readonly input?: unknown;
}

/** Whether a node's `run` is a useWorkflow call. */
export function isWorkflowCall(v: unknown): v is WorkflowCall {
  return v !== null && typeof v === 'object' && (v as Record<symbol, unknown>)[WORKFLOW_CALL] === true;
}

/**
 * `useWorkflow(child, input?)`, given as a node's `run`: the node runs the child workflow as a
 * nested execution. The input is checked against the child's `inputSchema` before it starts and its
 * output against `outputSchema` after; the output (an object) is merged into the run state as a
 * node's `data` is.
 */
export function useWorkflow(child: WorkflowDefinition, input?: ((state: any) => unknown) | Record<string, unknown>): WorkflowCall {
  return Object.defineProperty({ workflow: child?.id, child, ...(input !== undefined ? { input } : {}) }, WORKFLOW_CALL, {
    value: true,
    enumerable: false,
  }) as WorkflowCall;
}
