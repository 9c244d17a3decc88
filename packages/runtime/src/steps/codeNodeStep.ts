import { LIVE_MODULE_PREFIX, liveWorkflow, parseLiveModule, type StepEnvelope, type StepResult } from '@stepforge/contract';
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { RuntimeError, isRuntimeError } from '../errors/RuntimeError.js';
import { executeStep } from '../runtime/executeStep.js';
import type { Runtime } from '../runtime/Runtime.js';
import { stepFunctions } from '../runtime/sfnClient.js';
import { importFile } from '../userfn/importFile.js';
import { reloadLiveWorkflow } from '../userfn/reloadLiveWorkflow.js';
import { resolveInputs } from './resolveInputs.js';

/**
 * A node of a workflow written in code: imports the user's module (`config.codeModule`), takes the
 * exported workflow (`config.codeExport`) and calls its node `config.codeNode` with the run state
 * as `input` and the node's `params`, as Kortyx calls a node. Its NodeResult is the step output
 * (the state machine merges `data` and routes on `condition` / `intent`). Committed output is
 * reused on a retried run like any step's (executeStep, by idempotency key).
 */
export async function runCodeNodeStep(rt: Runtime, rawEnv: StepEnvelope): Promise<StepResult> {
  const env = await resolveInputs(rt, rawEnv);
  const { codeModule, codeExport, codeNode } = env.config as Record<string, unknown>;
  if (typeof codeModule !== 'string' || typeof codeExport !== 'string' || typeof codeNode !== 'string') {
    throw new RuntimeError('InvalidEnvelope', 'code node step needs config.codeModule, config.codeExport and config.codeNode');
  }
  const codeFn = env.config.codeFn;
  // Not committed: on a retried run it must look again at what the earlier child did since.
  if (codeFn === 'childEarlier')
    return {
      status: 'succeeded',
      output: await earlierChild(rt, env.inputs.value, codeNode, String(env.config.codeChild)),
      usage: { inputTokens: 0, outputTokens: 0 },
    };
  const mod = await loadCodeModule(codeModule, codeExport, codeNode);
  const call = codeFunction(mod[codeExport], codeNode, env.config);
  if (call === undefined) {
    throw new RuntimeError(
      'CodeModuleLoadError',
      `node '${codeNode}': the module ${codeModule} exports no workflow '${codeExport}' with that node${typeof codeFn === 'string' ? ` and its ${codeFn} function` : ''} (was it renamed since the workflow was compiled?)`,
      { details: { node: codeNode, module: codeModule } },
    );
  }
  const done = await executeStep(rt, env, { idempotent: false }, async () => {
    try {
      return { output: await call(env.inputs.value) };
    } catch (e) {
      if (isRuntimeError(e)) throw e;
      throw new RuntimeError(
        'NodeError',
        `node '${codeNode}' threw ${(e as Error).name ?? 'an error'}: ${(e as Error).message ?? String(e)}`,
        { cause: e, details: { node: codeNode } },
      );
    }
  });
  return { status: done.status, output: done.output, ...(done.outputRef ? { outputRef: done.outputRef } : {}), usage: done.usage };
}

/** The module a code step names: a file (imported), or a workflow `.run()` holds in this process. */
async function loadCodeModule(codeModule: string, codeExport: string, codeNode: string): Promise<Record<string, unknown>> {
  if (codeModule.startsWith(LIVE_MODULE_PREFIX)) {
    let live = liveWorkflow(codeModule);
    const from = parseLiveModule(codeModule)?.from;
    // A keyed .run() records where the program built the workflow: loaded again from there.
    if (live === undefined && from !== undefined) {
      try {
        live = await reloadLiveWorkflow(codeModule);
      } catch (e) {
        throw new RuntimeError(
          'CodeModuleLoadError',
          `node '${codeNode}': the workflow was started by .run() in a program that is no longer running, and loading it again from ${from} failed: ${(e as Error).message ?? String(e)}`,
          { cause: e, details: { node: codeNode, module: codeModule } },
        );
      }
    }
    if (live === undefined) {
      throw new RuntimeError(
        'CodeModuleLoadError',
        `node '${codeNode}': the workflow was started by .run() in a program that is no longer running, and only that process holds its functions`,
        { details: { node: codeNode, module: codeModule } },
      );
    }
    return { [codeExport]: live };
  }
  try {
    return await importFile(codeModule.startsWith('file:') ? codeModule : pathToFileURL(codeModule).href);
  } catch (e) {
    throw new RuntimeError(
      'CodeModuleLoadError',
      `node '${codeNode}': the module ${codeModule} could not be loaded: ${(e as Error).message ?? String(e)}`,
      { cause: e, details: { node: codeNode, module: codeModule } },
    );
  }
}

/** A user's function as a step runs it: given the step's input value, resolving to its output. */
export type CodeCall = (value: unknown) => Promise<unknown>;

/**
 * The function a code step calls in an exported workflow: a Kortyx node (no `codeFn`) or one of an
 * agent SDK workflow's functions (`codeFn`, with `codePath` for a workflow's steps); undefined
 * when the workflow has no such function (a module changed since it was compiled).
 */
export function codeFunction(wf: unknown, node: string, config: Readonly<Record<string, unknown>>): CodeCall | undefined {
  if (config.codeFn === 'childInput' || config.codeFn === 'childOutput') return kortyxChildCheck(wf, node, config.codeFn);
  return typeof config.codeFn === 'string'
    ? sdkFunction(wf, node, config.codeFn, config.codePath)
    : kortyxNode(wf, node, config.params, config.codeHandoffs);
}

/** A zod-like schema: what useWorkflow's checks call. */
interface Schema {
  safeParse(v: unknown): {
    success: boolean;
    data?: unknown;
    error?: { issues?: readonly { path?: readonly PropertyKey[]; message?: string }[] };
  };
}

/**
 * The checks around a Kortyx node given `useWorkflow(child, input)` (the `run` is the descriptor,
 * marked by Symbol.for('stepforge.workflowCall')). `childInput`: the child's input (the descriptor's
 * function of the run state, its fixed value, or the run state), which must be an object (a run's
 * input is) and pass the child's inputSchema: WorkflowInputInvalid otherwise. `childOutput`: the
 * child execution's output against its outputSchema (WorkflowOutputInvalid otherwise), answered as
 * the node's `data` (an object merges into the run state; anything else is kept under the node's name).
 * A schema's parsed value (defaults, transforms) is what goes on.
 */
function kortyxChildCheck(wf: unknown, node: string, fn: 'childInput' | 'childOutput'): CodeCall | undefined {
  const call = (wf as { nodes?: Record<string, { run?: unknown }> } | undefined)?.nodes?.[node]?.run as
    { child?: { id?: unknown; inputSchema?: Schema; outputSchema?: Schema }; input?: unknown } | undefined;
  if (call === null || typeof call !== 'object' || (call as Record<symbol, unknown>)[Symbol.for('stepforge.workflowCall')] !== true)
    return undefined;
  const child = call.child ?? {};
  const id = String(child.id);
  if (fn === 'childInput') {
    return async (state) => {
      const input =
        typeof call.input === 'function'
          ? await (call.input as (s: unknown) => unknown)(state ?? {})
          : call.input !== undefined
            ? call.input
            : (state ?? {});
      const value = checked(child.inputSchema, input, 'WorkflowInputInvalid', `node '${node}': the input of workflow '${id}'`, node, id);
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw new RuntimeError(
          'WorkflowInputInvalid',
          `node '${node}': the input of workflow '${id}' must be an object (a run's input is), not ${Array.isArray(value) ? 'a list' : (JSON.stringify(value) ?? String(value))}`,
          { details: { node, workflow: id } },
        );
      }
      // The child execution's name, committed with the input: a retried parent starts the child
      // under the same name, and so finds the execution it started before (earlierChild).
      return { input: value, name: `${executionNamePart(node)}-${randomUUID()}` };
    };
  }
  return async (output) => {
    const value = checked(child.outputSchema, output, 'WorkflowOutputInvalid', `node '${node}': the output of workflow '${id}'`, node, id);
    return { data: value !== null && typeof value === 'object' && !Array.isArray(value) ? value : { [node]: value ?? null } };
  };
}

/** The schema's parsed value, or a RuntimeError `name` naming the first zod issue (path and message). */
function checked(
  schema: Schema | undefined,
  value: unknown,
  name: 'WorkflowInputInvalid' | 'WorkflowOutputInvalid',
  what: string,
  node: string,
  workflow: string,
): unknown {
  if (schema === undefined || typeof schema.safeParse !== 'function') return value;
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error?.issues ?? [];
  const first = issues[0];
  const at = first?.path && first.path.length > 0 ? ` at ${first.path.map(String).join('.')}` : '';
  throw new RuntimeError(
    name,
    `${what} does not match its ${name === 'WorkflowInputInvalid' ? 'inputSchema' : 'outputSchema'}${at}: ${first?.message ?? 'invalid'}${issues.length > 1 ? ` (and ${issues.length - 1} more issue${issues.length > 2 ? 's' : ''})` : ''}`,
    {
      details: { node, workflow, issues: issues.map((i) => ({ path: (i.path ?? []).map(String), message: i.message ?? '' })) },
    },
  );
}

/**
 * A Kortyx node: `run({input, params})`, its NodeResult the output (`{}` for none). A returned
 * `transitionTo` must name one of `handoffs`, the workflows the compiler gave the state machine a
 * hand-off to (the module's other Kortyx workflows): HandoffTargetUnknown otherwise, naming the node.
 */
function kortyxNode(wf: unknown, node: string, params: unknown, handoffs: unknown): CodeCall | undefined {
  const run = (wf as { nodes?: Record<string, { run?: unknown }> } | undefined)?.nodes?.[node]?.run;
  if (typeof run !== 'function') return undefined;
  return async (value) => {
    const result = (await run({ input: value ?? {}, params: params ?? {} })) ?? {};
    // A child workflow runs as a nested execution, which the compiler emits only for a node declared
    // with it: one returned from a node's body at run time has no state machine to start.
    if (
      result !== null &&
      typeof result === 'object' &&
      (result as Record<symbol, unknown>)[Symbol.for('stepforge.workflowCall')] === true
    ) {
      const child = String((result as { workflow?: unknown }).workflow);
      throw new RuntimeError(
        'WorkflowCallNotDeclared',
        `node '${node}' returned useWorkflow('${child}') from its function: give it as the node's run instead (nodes: { ${node}: { run: useWorkflow(${child}, input) } }), which compiles to a nested execution`,
        { details: { node, workflow: child } },
      );
    }
    // The state machine starts the named workflow when this one ends; one it has no hand-off to
    // would otherwise be dropped there without a word.
    const to = (result as { transitionTo?: unknown } | null)?.transitionTo;
    if (to !== undefined && to !== null && to !== '') {
      const known = Array.isArray(handoffs) ? handoffs.filter((h): h is string => typeof h === 'string') : [];
      if (typeof to !== 'string' || !known.includes(to)) {
        const self = (wf as { id?: unknown } | undefined)?.id;
        const why =
          to === self
            ? 'which is this workflow itself: route back to a node with an edge instead'
            : known.length === 0
              ? 'but the module exports no other Kortyx workflow to hand the run over to: export the workflow with that id (defineWorkflow) from the same module'
              : `which is no other Kortyx workflow the module exports (${known.join(', ')}): export the workflow with that id from the same module`;
        throw new RuntimeError('HandoffTargetUnknown', `node '${node}' returned transitionTo ${JSON.stringify(to) ?? String(to)}, ${why}`, {
          details: { node, workflow: to, workflows: known },
        });
      }
    }
    return result;
  };
}

const END = '__end__';

/**
 * One of the functions of an agent SDK workflow. `workflow` / `parallel`: a step's `when(prev)`
 * (answered as a boolean, which the state machine's Choice reads) or `transform(prev)`, found by
 * the step's indices (`codePath`). `stateGraph`: a node's function (`node`, given the state) or
 * an agent node's `input(state)` / `merge(state, output)`, and the router after a node (`route`),
 * whose answer must name a node of the graph or END (UnknownNode otherwise, naming the node).
 */
function sdkFunction(wf: unknown, node: string, fn: string, path: unknown): CodeCall | undefined {
  const w = wf as
    { kind?: string; steps?: unknown[]; nodes?: ReadonlyMap<string, unknown>; edges?: ReadonlyMap<string, unknown> } | undefined;
  if (w?.kind === 'workflow' || w?.kind === 'parallel') {
    if (!Array.isArray(path)) return undefined;
    let s: unknown = { steps: w.steps };
    for (const i of path) s = (s as { steps?: unknown[] } | undefined)?.steps?.[i as number];
    const f = (s as Record<string, unknown> | undefined)?.[fn];
    if (typeof f !== 'function' || (fn !== 'when' && fn !== 'transform')) return undefined;
    return fn === 'when' ? async (prev) => Boolean(await f(prev)) : async (prev) => (await f(prev)) ?? null;
  }
  if (w?.kind !== 'stateGraph' || !w.nodes || !w.edges) return undefined;
  const n = w.nodes.get(node) as ((s: unknown) => unknown) | { inputFn?: unknown; mergeFn?: unknown } | undefined;
  if (fn === 'node' && typeof n === 'function') return async (state) => (await n(state)) ?? {};
  if (fn === 'input' && typeof (n as { inputFn?: unknown })?.inputFn === 'function')
    return async (state) => (await (n as { inputFn: (s: unknown) => unknown }).inputFn(state)) ?? null;
  if (fn === 'merge' && typeof (n as { mergeFn?: unknown })?.mergeFn === 'function') {
    return async (v) =>
      (await (n as { mergeFn: (s: unknown, o: unknown) => unknown }).mergeFn(
        (v as { state?: unknown })?.state,
        (v as { output?: unknown })?.output,
      )) ?? {};
  }
  const router = w.edges.get(node);
  if (fn === 'route' && typeof router === 'function') {
    const nodes = w.nodes;
    return async (state) => {
      const to = await router(state);
      if (to !== END && (typeof to !== 'string' || !nodes.has(to))) {
        throw new RuntimeError(
          'UnknownNode',
          `node '${node}': its router returned ${JSON.stringify(to) ?? String(to)}, which is no node of the graph (nodes: ${[...nodes.keys()].join(', ')}; or END)`,
          { details: { node, returned: to ?? null } },
        );
      }
      return to;
    };
  }
  return undefined;
}

/** A node name as the start of an execution name (at most 80 characters of letters, digits, - and _). */
function executionNamePart(node: string): string {
  return node.replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 40) || 'child';
}

/** How many executions of one useWorkflow node a run lineage may start under successive names. */
const MAX_CHILD_ATTEMPTS = 20;

/**
 * A useWorkflow child whose name is taken (the parent was retried and reuses the name its input
 * check committed): `{reused: true, output}` of the earlier execution when it succeeded, so the
 * child is not run again; otherwise `{reused: false, name}` to start it under: the same name while it runs (StartExecution with
 * the same name and input then waits on it), else the next of `<name>.2`, `<name>.3`, … that has
 * no closed unsuccessful execution, since a closed execution's name cannot be reused.
 */
async function earlierChild(
  rt: Runtime,
  value: unknown,
  node: string,
  child: string,
): Promise<{ reused: boolean; output: unknown; name: string }> {
  const arn = (value as { executionArn?: unknown } | null)?.executionArn;
  if (typeof arn !== 'string') throw new RuntimeError('InvalidEnvelope', `node '${node}': the earlier child check needs the execution ARN`);
  const base = arn.slice(arn.lastIndexOf(':') + 1).replace(/\.\d+$/, '');
  const prefix = arn.slice(0, arn.lastIndexOf(':') + 1);
  for (let n = 1; n <= MAX_CHILD_ATTEMPTS; n++) {
    const name = n === 1 ? base : `${base}.${n}`;
    let d;
    try {
      const { sdk, client } = await stepFunctions(rt);
      d = await client.send(new sdk.DescribeExecutionCommand({ executionArn: `${prefix}${name}` }));
    } catch (e) {
      if ((e as Error).name === 'ExecutionDoesNotExist') return { reused: false, output: null, name };
      throw e;
    }
    if (d.status === 'SUCCEEDED') return { reused: true, output: d.output === undefined ? null : JSON.parse(d.output), name };
    if (d.status === 'RUNNING' || d.status === 'PENDING_REDRIVE') return { reused: false, output: null, name };
  }
  throw new RuntimeError(
    'WorkflowChildAttemptsExhausted',
    `node '${node}': workflow '${child}' was started ${MAX_CHILD_ATTEMPTS} times for this node and never succeeded; restart the run from the node (stepforge runs restart RUN --from ${node}) to start it under a new name`,
    { details: { node, workflow: child } },
  );
}
