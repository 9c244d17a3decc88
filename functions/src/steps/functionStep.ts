import type { StepEnvelope, StepResult } from '@stepforge/compiler';
import { RuntimeError, isRuntimeError } from '../errors/RuntimeError.js';
import { executeStep } from '../runtime/executeStep.js';
import type { Runtime } from '../runtime/Runtime.js';
import { loadUserFunction } from '../userfn/loadUserFunction.js';
import { resolveInputs } from './resolveInputs.js';

/**
 * A function step: imports the user function named by `config.function` (or `config.name`) and
 * calls it with the resolved input and its secret bindings as arguments — resolved here, at run
 * time, and redacted from whatever the function returns.
 */
export async function runFunctionStep(rt: Runtime, rawEnv: StepEnvelope): Promise<StepResult> {
  const env = await resolveInputs(rt, rawEnv);
  const name = env.config.function ?? env.config.name ?? env.config.handler;
  if (typeof name !== 'string') throw new RuntimeError('InvalidEnvelope', 'function step has no config.function');
  const fn = await loadUserFunction(rt.config.userFunctionsDir, name);
  const done = await executeStep(rt, env, { idempotent: env.config.idempotent === true }, async () => {
    const secrets: Record<string, string> = {};
    for (const id of env.secrets) secrets[id] = await rt.secrets.resolve(id);
    const input = await rt.secrets.resolveDeep(env.inputs.value ?? env.config.args ?? env.inputs.input ?? null);
    try {
      return { output: await fn(input, { secrets, runId: env.run.id, stepId: env.step.id }) ?? null };
    } catch (e) {
      if (isRuntimeError(e)) throw e;
      throw new RuntimeError('FunctionError', `function ${name} threw ${(e as Error).name ?? 'an error'}: ${(e as Error).message ?? String(e)}`, { cause: e });
    }
  });
  return { status: done.status, output: done.output, ...(done.outputRef ? { outputRef: done.outputRef } : {}), usage: done.usage };
}
