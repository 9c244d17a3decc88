import { RuntimeError } from '../errors/RuntimeError.js';
import type { Runtime } from '../runtime/Runtime.js';
import { LocalProvider } from './LocalProvider.js';
import type { ModelProvider } from './ModelProvider.js';
import { parseModelSpec } from './parseModelSpec.js';
import { OpenAiProvider } from './OpenAiProvider.js';

const cache = new WeakMap<Runtime, Map<string, ModelProvider>>();

/**
 * Picks the provider for a step's `model` string (`bedrock:<id>`, `openai:<id>`, `ollama:<id>`,
 * `vllm:<id>`, `local:<mode>`, or a bare id for the configured default). With no provider
 * configured at all, every step runs on the offline local provider.
 */
export async function selectProvider(rt: Runtime, model: unknown): Promise<{ provider: ModelProvider; modelId: string }> {
  const { prefix, modelId } = parseModelSpec(model);
  let name: string = prefix ?? rt.config.provider.default;
  if (!rt.config.provider.configured) name = 'local';
  const byName = cache.get(rt) ?? new Map<string, ModelProvider>();
  cache.set(rt, byName);
  let provider = byName.get(name);
  if (!provider) {
    switch (name) {
      case 'local':
        provider = new LocalProvider(rt.config.provider.localScript);
        break;
      case 'bedrock': {
        // Loaded on first use: the Bedrock runtime client is ~115 KB of SDK that a process whose
        // steps run on another provider (the offline one of every first `stepforge run`) never compiles.
        const [{ BedrockProvider }, { bedrockClient }] = await Promise.all([
          import('./BedrockProvider.js'),
          import('../runtime/bedrockClient.js'),
        ]);
        provider = new BedrockProvider(bedrockClient(rt));
        break;
      }
      case 'openai': {
        const keyRef = rt.config.provider.openaiApiKey;
        const apiKey = keyRef?.startsWith('$secret:') ? await rt.secrets.resolve(keyRef.slice(8)) : keyRef;
        provider = new OpenAiProvider({
          baseUrl: rt.config.provider.openaiBaseUrl,
          apiKey,
          timeoutMs: rt.config.provider.requestTimeoutMs,
        });
        break;
      }
      default:
        throw new RuntimeError('ConfigError', `unknown model provider "${name}"`);
    }
    byName.set(name, provider);
  }
  if (modelId !== 'default') return { provider, modelId };
  if (name === 'local') return { provider, modelId: 'local' };
  // A real provider has no model called "default": it would refuse the call, after the step started.
  const fallback = rt.config.provider.defaultModel;
  if (fallback === undefined) {
    throw new RuntimeError(
      'ConfigError',
      `the step names no model for the ${name} provider: give the task a model (e.g. model: "${name === 'bedrock' ? 'bedrock:anthropic.claude-3-5-haiku-20241022-v1:0' : 'openai:gpt-4o-mini'}") or set STEPFORGE_MODEL to the model id steps without one use`,
    );
  }
  return { provider, modelId: fallback };
}
