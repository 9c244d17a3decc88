import type { StepEnvelope, StepResult } from '@stepforge/contract';
import { RuntimeError, isRuntimeError } from '../errors/RuntimeError.js';
import { executeStep } from '../runtime/executeStep.js';
import type { Runtime } from '../runtime/Runtime.js';
import { importUserFunction, type UserFunctionContext } from '../userfn/loadUserFunction.js';
import { captureConsole } from '../userfn/captureConsole.js';
import type { PythonCallError } from '../userfn/PythonWorker.js';
import { runtimePythonWorker } from '../userfn/runtimePythonWorker.js';
import { resolveUserFunction, type UserFunctionFile } from '../userfn/resolveUserFunction.js';
import { resolveInputs } from './resolveInputs.js';
import { runCodeNodeStep } from './codeNodeStep.js';

/**
 * A function step: finds the user function named by `config.function` (or `config.name`) and
 * calls it with the resolved input and a context of its secrets, run and step — a JavaScript module
 * in this process, a Python one in the runtime's Python worker. Secrets are resolved here, at run
 * time, and redacted from whatever the function returns.
 */
export async function runFunctionStep(rt: Runtime, rawEnv: StepEnvelope): Promise<StepResult> {
  // A node of a workflow written in code: the module and node, not a file in the functions folder.
  if (typeof rawEnv.config.codeModule === 'string') return runCodeNodeStep(rt, rawEnv);
  const env = await resolveInputs(rt, rawEnv);
  const name = env.config.function ?? env.config.name ?? env.config.handler;
  if (typeof name !== 'string') throw new RuntimeError('InvalidEnvelope', 'function step has no config.function');
  const dir = rt.config.userFunctionsDir;
  const file = resolveUserFunction(dir, name);
  const js = file.language === 'javascript' ? await importUserFunction(dir, file) : undefined;
  const done = await executeStep(rt, env, { idempotent: env.config.idempotent === true }, async () => {
    const { secrets, bindings } = await functionSecrets(rt, env);
    const input = await rt.secrets.resolveDeep(env.inputs.value ?? env.config.args ?? env.inputs.input ?? null);
    const context: UserFunctionContext = { secrets, runId: env.run.id, stepId: env.step.id, workflow: env.run.workflow };
    if (!js) return { output: await runPythonFunction(rt, name, file, input, context, bindings) };
    const printed = { stdout: '', stderr: '' };
    let ended = false;
    // Kept for the call while it runs, logged as one line per stream; output of work it started that prints later is logged as it comes.
    const sink = (stream: 'stdout' | 'stderr', text: string) => {
      if (ended) logFunctionOutput(rt, name, context, { stdout: '', stderr: '', [stream]: `${text}\n` });
      else printed[stream] += `${text}\n`;
    };
    try {
      return { output: (await captureConsole(sink, () => js(input, context))) ?? null };
    } catch (e) {
      if (isRuntimeError(e)) throw e;
      throw new RuntimeError(
        'FunctionError',
        `function ${name} threw ${(e as Error).name ?? 'an error'}: ${(e as Error).message ?? String(e)}`,
        { cause: e },
      );
    } finally {
      ended = true;
      logFunctionOutput(rt, name, context, printed);
    }
  });
  return { status: done.status, output: done.output, ...(done.outputRef ? { outputRef: done.outputRef } : {}), usage: done.usage };
}

/**
 * The step's secrets: by id (`envelope.secrets`) and by binding name (`config.secretNames`, name → id,
 * as the DSL's step `secrets:` mapping names them), and the bindings alone (name → value), which a
 * Python function called GraphN's way receives as keyword arguments. Without names, the ids name them.
 */
async function functionSecrets(
  rt: Runtime,
  env: StepEnvelope,
): Promise<{ secrets: Record<string, string>; bindings: Record<string, string> }> {
  const secrets: Record<string, string> = {};
  for (const id of env.secrets) secrets[id] = await rt.secrets.resolve(id);
  const names = env.config.secretNames;
  if (names === null || typeof names !== 'object' || Array.isArray(names)) return { secrets, bindings: { ...secrets } };
  const bindings: Record<string, string> = {};
  for (const [binding, id] of Object.entries(names as Record<string, unknown>)) {
    if (typeof id !== 'string') throw new RuntimeError('InvalidEnvelope', `config.secretNames.${binding} must be a secret id`);
    bindings[binding] = secrets[id] ?? (await rt.secrets.resolve(id));
  }
  return { secrets: { ...secrets, ...bindings }, bindings };
}

/** What a user function printed, to the runtime's log (redacted there, in every encoding of a secret). */
function logFunctionOutput(
  rt: Runtime,
  name: string,
  context: UserFunctionContext,
  printed: { readonly stdout: string; readonly stderr: string },
): void {
  for (const stream of ['stdout', 'stderr'] as const) {
    if (printed[stream] !== '')
      rt.logger.info('function output', { function: name, stepId: context.stepId, runId: context.runId, stream, text: printed[stream] });
  }
}

/** Calls a Python user function in the runtime's worker; what it printed goes to the log (redacted there). */
async function runPythonFunction(
  rt: Runtime,
  name: string,
  file: UserFunctionFile,
  input: unknown,
  context: UserFunctionContext,
  kwargs: Record<string, string>,
): Promise<unknown> {
  const answer = await runtimePythonWorker(rt).call({
    module: file.relative,
    ...(file.exportName ? { callable: file.exportName } : {}),
    input,
    context,
    kwargs,
  });
  logFunctionOutput(rt, name, context, answer);
  if (answer.ok) return answer.output;
  throw pythonFunctionError(rt, name, file, answer.error);
}

/** The FunctionError of a Python call that produced no value: `function NAME threw ValueError: bad input`, with its traceback. */
function pythonFunctionError(rt: Runtime, name: string, file: UserFunctionFile, error: PythonCallError): RuntimeError {
  const message =
    error.kind === 'raised'
      ? `function ${name} threw ${error.message}`
      : error.kind === 'not_json'
        ? `function ${name} ${error.message}`
        : `function ${name}: ${error.message}`;
  const err = new RuntimeError('FunctionError', message, {
    details: {
      function: name,
      module: file.relative,
      language: 'python',
      reason: error.kind,
      ...(error.type ? { exception: error.type } : {}),
    },
  });
  // The trace the execution's cause carries, as a Python Lambda's does: the user's own frames only,
  // relative to the functions folder, so no install path of this machine is stored with the run.
  // `lambdaRuntime` makes the embedded engine report it in the Python Lambda's error shape, as the
  // deployed stack's Python function Lambda does.
  return Object.assign(err, { stackTrace: rt.redactor.redact([...error.trace]), lambdaRuntime: 'python' as const });
}
