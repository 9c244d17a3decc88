// Which Lambda runs each function step: the compiler names one placeholder for every function step
// (`${FunctionStepFunctionArn}`, the Node function Lambda), not knowing in which language the function
// is written; here, at synth time, a step whose function resolves to a Python module in the user
// functions folder is pointed at the Python function Lambda instead (`${PythonFunctionStepFunctionArn}`),
// by the same rule the runtime resolves names with (resolveUserFunction), so the two agree.
import { resolveUserFunction } from '@stepforge/runtime';
import { findPlaceholders, kindPlaceholder, placeholder, PYTHON_FUNCTION_HANDLER, PYTHON_FUNCTION_PLACEHOLDER } from '@stepforge/contract';
import type { WorkflowSpec } from './WorkflowSpec.js';

const NODE_FUNCTION = kindPlaceholder('function');
const PYTHON_FUNCTION = placeholder(PYTHON_FUNCTION_PLACEHOLDER);

/** A workflow with its Python function steps' Tasks pointed at the Python function Lambda. */
export interface RoutedWorkflow {
  readonly workflow: WorkflowSpec;
  /** The Python modules its steps call, relative to the functions folder. */
  readonly pythonModules: readonly string[];
}

/**
 * Points each function step Task whose function is a Python module at the Python function Lambda,
 * and moves the secrets only those steps use to its grants. A name that finds both `NAME.py` and a
 * JavaScript `NAME` fails the synth, as it would fail the step (ConfigError); a name that finds
 * no module stays on the Node function Lambda, which reports it at run time as it always has.
 */
export function routePythonFunctions(workflow: WorkflowSpec, userFunctionsDir: string | undefined): RoutedWorkflow {
  if (!userFunctionsDir) return { workflow, pythonModules: [] };
  const modules = new Set<string>();
  const pythonSecrets = new Set<string>();
  const nodeSecrets = new Set<string>();
  const asl = structuredClone(workflow.asl) as Record<string, unknown>;
  forEachTask(asl, (task) => {
    const call = functionCall(task);
    if (!call) return;
    let language: string | undefined;
    try {
      const file = resolveUserFunction(userFunctionsDir, call.name);
      language = file.language;
      if (language === 'python') modules.add(file.relative);
    } catch (e) {
      if ((e as Error).name !== 'FunctionError') throw new Error(`${workflow.file}: ${(e as Error).message}`);
    }
    const secrets = language === 'python' ? pythonSecrets : nodeSecrets;
    for (const id of call.secrets) secrets.add(id);
    if (language === 'python') call.retarget(PYTHON_FUNCTION);
  });
  if (modules.size === 0) return { workflow, pythonModules: [] };
  const { function: nodeIds = [], ...others } = workflow.secretsByHandler;
  // Ids only Python steps name leave the Node function's grants; ids from elsewhere (top-level bindings) stay.
  const keptOnNode = nodeIds.filter((id) => nodeSecrets.has(id) || !pythonSecrets.has(id));
  return {
    workflow: {
      ...workflow,
      asl,
      placeholders: findPlaceholders(asl),
      secretsByHandler: {
        ...others,
        ...(keptOnNode.length > 0 ? { function: keptOnNode } : {}),
        ...(pythonSecrets.size > 0 ? { [PYTHON_FUNCTION_HANDLER]: [...pythonSecrets].sort() } : {}),
      },
    },
    pythonModules: [...modules].sort(),
  };
}

/** A function step's Task: the function it names, its secret ids, and how to point it at another Lambda. */
interface FunctionCall {
  readonly name: string;
  readonly secrets: readonly string[];
  retarget(resource: string): void;
}

/** The function step a Task invokes, in either shape the compiler may emit (the function ARN as Resource, or lambda:invoke). */
function functionCall(task: Record<string, unknown>): FunctionCall | undefined {
  const args = (task.Arguments ?? task.Parameters) as Record<string, unknown> | undefined;
  if (task.Resource === NODE_FUNCTION)
    return callOf(args, (r) => {
      task.Resource = r;
    });
  if (args && args.FunctionName === NODE_FUNCTION) {
    const payload = (args.Payload ?? args) as Record<string, unknown>;
    return callOf(payload, (r) => {
      args.FunctionName = r;
    });
  }
  return undefined;
}

function callOf(envelope: Record<string, unknown> | undefined, retarget: (resource: string) => void): FunctionCall | undefined {
  const config = envelope?.config as Record<string, unknown> | undefined;
  const name = config?.function ?? config?.name ?? config?.handler;
  if (typeof name !== 'string') return undefined;
  const names = config?.secretNames;
  const secrets = [
    ...(Array.isArray(envelope?.secrets)
      ? (envelope.secrets as unknown[])
      : Array.isArray(config?.secrets)
        ? (config.secrets as unknown[])
        : []),
    ...(names !== null && typeof names === 'object' ? Object.values(names as Record<string, unknown>) : []),
  ]
    .filter((s): s is string => typeof s === 'string')
    .map((s) => s.replace(/^\$secret:/, ''));
  return { name, secrets, retarget };
}

/** Calls `visit` on every Task state, inside Parallel branches and Map iterations too. */
function forEachTask(machine: Record<string, unknown>, visit: (task: Record<string, unknown>) => void): void {
  for (const state of Object.values((machine.States ?? {}) as Record<string, Record<string, unknown>>)) {
    if (state.Type === 'Task') visit(state);
    for (const branch of (state.Branches ?? []) as Record<string, unknown>[]) forEachTask(branch, visit);
    for (const inner of [state.ItemProcessor, state.Iterator]) if (inner) forEachTask(inner as Record<string, unknown>, visit);
  }
}
