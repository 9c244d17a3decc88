import type { StepEnvelope } from '@stepforge/contract';
import type { Runtime } from '../runtime/Runtime.js';

/** The envelope with every `{"$ref"}` in its inputs and tool call replaced by the stored value. */
export async function resolveInputs(rt: Runtime, env: StepEnvelope): Promise<StepEnvelope> {
  const inputs = await rt.blobs.resolveRefs(env.inputs);
  const toolCall = env.toolCall ? await rt.blobs.resolveRefs(env.toolCall) : undefined;
  const turn = env.turn ? await rt.blobs.resolveRefs(env.turn) : undefined;
  return { ...env, inputs, ...(toolCall ? { toolCall } : {}), ...(turn ? { turn } : {}) };
}

/** Renders a value for a prompt: strings as they are, anything else as pretty JSON. */
export function renderForPrompt(v: unknown): string {
  return typeof v === 'string' ? v : (JSON.stringify(v, null, 2) ?? '');
}
