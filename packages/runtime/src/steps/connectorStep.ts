import type { StepEnvelope, StepResult } from '@stepforge/contract';
import { BUILTIN_CONNECTORS } from '../connectors/builtinConnectors.js';
import { RuntimeError } from '../errors/RuntimeError.js';
import { executeStep, stepIdempotencyKey } from '../runtime/executeStep.js';
import type { Runtime } from '../runtime/Runtime.js';
import { resolveInputs } from './resolveInputs.js';

/**
 * A connector step: `config.connector` + `config.action` (or `connector: "slack.send_message"`),
 * input from the ASL-resolved value or `config.input`. Runs once per step execution; the call is
 * marked as dispatched before it leaves, so a crash is never silently repeated.
 */
export async function runConnectorStep(rt: Runtime, rawEnv: StepEnvelope): Promise<StepResult> {
  const env = await resolveInputs(rt, rawEnv);
  let name = env.config.connector;
  let action = env.config.action;
  if (typeof name === 'string' && action === undefined && name.includes('.')) [name, action] = name.split('.', 2);
  if (typeof name !== 'string') throw new RuntimeError('InvalidEnvelope', 'connector step has no config.connector');
  const connector = BUILTIN_CONNECTORS[name];
  if (!connector)
    throw new RuntimeError('ConnectorError', `unknown connector "${name}" (known: ${Object.keys(BUILTIN_CONNECTORS).join(', ')})`);
  const actionName = typeof action === 'string' ? action : name === 'http' || name === 'webhook' ? 'request' : '';
  const act = connector.actions[actionName];
  if (!act)
    throw new RuntimeError(
      'ConnectorError',
      `connector "${name}" has no action "${actionName}" (known: ${Object.keys(connector.actions).join(', ')})`,
    );
  const raw = env.inputs.value ?? env.config.input ?? {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new RuntimeError('InvalidInput', `connector ${name}.${actionName} input must be an object`);
  const input = raw as Record<string, unknown>;
  const key = stepIdempotencyKey(env);
  const done = await executeStep(rt, env, { idempotent: act.idempotent(input), claimsAtDispatch: true }, async (guard) => {
    const resolved = await rt.secrets.resolveDeep(input);
    return { output: await act.run(resolved, { runtime: rt, runId: env.run.id, stepId: env.step.id, idempotencyKey: key, guard }) };
  });
  return { status: done.status, output: done.output, ...(done.outputRef ? { outputRef: done.outputRef } : {}), usage: done.usage };
}
