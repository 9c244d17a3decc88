import { RuntimeError } from '../errors/RuntimeError.js';
import type { Runtime } from '../runtime/Runtime.js';
import { BedrockProvider } from './BedrockProvider.js';
import { LocalProvider } from './LocalProvider.js';
import type { ModelProvider } from './ModelProvider.js';
import { OpenAiProvider } from './OpenAiProvider.js';

const cache = new WeakMap<Runtime, Map<string, ModelProvider>>();

/**
 * Picks the provider for a step's `model` string (`bedrock:<id>`, `openai:<id>`, `ollama:<id>`,
 * `vllm:<id>`, `local:<mode>`, or a bare id for the configured default). With no provider
 * configured at all, every step runs on the offline local provider.
 */
export async function selectProvider(rt: Runtime, model: unknown): Promise<{ provider: ModelProvider; modelId: string }> {
  const spec = typeof model === 'string' && model.length > 0 ? model : 'default';
  const colon = spec.indexOf(':');
  let prefix = colon > 0 ? spec.slice(0, colon) : '';
  let modelId = colon > 0 ? spec.slice(colon + 1) : spec;
  if (!['bedrock', 'openai', 'ollama', 'vllm', 'local'].includes(prefix)) {
    prefix = '';
    modelId = spec;
  }
  let name = prefix === '' ? rt.config.provider.default : prefix === 'ollama' || prefix === 'vllm' ? 'openai' : prefix;
  if (!rt.config.provider.configured) name = 'local';
  const byName = cache.get(rt) ?? new Map<string, ModelProvider>();
  cache.set(rt, byName);
  let provider = byName.get(name);
  if (!provider) {
    switch (name) {
      case 'local':
        provider = new LocalProvider(rt.config.provider.localScript);
        break;
      case 'bedrock':
        provider = new BedrockProvider(rt.bedrock());
        break;
      case 'openai': {
        const keyRef = rt.config.provider.openaiApiKey;
        const apiKey = keyRef?.startsWith('$secret:') ? await rt.secrets.resolve(keyRef.slice(8)) : keyRef;
        provider = new OpenAiProvider({ baseUrl: rt.config.provider.openaiBaseUrl, apiKey, timeoutMs: rt.config.provider.requestTimeoutMs });
        break;
      }
      default:
        throw new RuntimeError('ConfigError', `unknown model provider "${name}"`);
    }
    byName.set(name, provider);
  }
  return { provider, modelId: modelId === 'default' ? (name === 'local' ? 'local' : modelId) : modelId };
}
