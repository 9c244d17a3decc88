import type { StepEnvelope, StepResult } from '@stepforge/contract';
import { pathToFileURL } from 'node:url';
import { RuntimeError, isRuntimeError } from '../errors/RuntimeError.js';
import { executeStep } from '../runtime/executeStep.js';
import type { Runtime } from '../runtime/Runtime.js';
import { importFile } from '../userfn/importFile.js';
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
  let mod: Record<string, unknown>;
  try {
    mod = await importFile(codeModule.startsWith('file:') ? codeModule : pathToFileURL(codeModule).href);
  } catch (e) {
    throw new RuntimeError('CodeModuleLoadError', `node '${codeNode}': the module ${codeModule} could not be loaded: ${(e as Error).message ?? String(e)}`, { cause: e, details: { node: codeNode, module: codeModule } });
  }
  const wf = mod[codeExport] as { nodes?: Record<string, { run?: unknown }> } | undefined;
  const run = wf?.nodes?.[codeNode]?.run;
  if (typeof run !== 'function') {
    throw new RuntimeError('CodeModuleLoadError', `node '${codeNode}': the module ${codeModule} exports no workflow '${codeExport}' with that node (was it renamed since the workflow was compiled?)`, { details: { node: codeNode, module: codeModule } });
  }
  const done = await executeStep(rt, env, { idempotent: false }, async () => {
    try {
      const result = await (run as (a: { input: unknown; params: unknown }) => unknown)({ input: env.inputs.value ?? {}, params: env.config.params ?? {} });
      return { output: result ?? {} };
    } catch (e) {
      if (isRuntimeError(e)) throw e;
      throw new RuntimeError('NodeError', `node '${codeNode}' threw ${(e as Error).name ?? 'an error'}: ${(e as Error).message ?? String(e)}`, { cause: e, details: { node: codeNode } });
    }
  });
  return { status: done.status, output: done.output, ...(done.outputRef ? { outputRef: done.outputRef } : {}), usage: done.usage };
}
