import type { ProviderName } from '../config/RuntimeConfig.js';

/** The model providers a step's `model` string may name as its prefix. */
export const MODEL_PROVIDERS = ['bedrock', 'openai', 'ollama', 'vllm', 'local'] as const;

/** A step's `model` string split as the runtime reads it. */
export interface ModelSpec {
  /** The provider (`ollama` and `vllm` speak the OpenAI-compatible API: `openai`), or undefined for a bare id (or no model): the configured default provider serves it. */
  readonly prefix?: ProviderName;
  /** The model id; `default` when the step names none. */
  readonly modelId: string;
}

/**
 * Splits `bedrock:<id>`, `openai:<id>`, `ollama:<id>`, `vllm:<id>` or `local:<mode>`; any other
 * string (a prefix that is no provider's, or none) is a bare id, and no model at all is `default`.
 */
export function parseModelSpec(model: unknown): ModelSpec {
  const spec = typeof model === 'string' && model.length > 0 ? model : 'default';
  const colon = spec.indexOf(':');
  const prefix = colon > 0 ? spec.slice(0, colon) : '';
  if (!(MODEL_PROVIDERS as readonly string[]).includes(prefix)) return { modelId: spec };
  return { prefix: prefix === 'ollama' || prefix === 'vllm' ? 'openai' : (prefix as ProviderName), modelId: spec.slice(colon + 1) };
}
