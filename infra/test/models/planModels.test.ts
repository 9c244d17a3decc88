import { describe, expect, it } from 'vitest';
import { planModels } from '../../lib/models/planModels.js';
import type { ModelStep } from '../../lib/models/modelSteps.js';

const step = (id: string, model?: string): ModelStep => ({
  workflow: 'brief',
  file: 'workflows/brief.chain.yaml',
  step: id,
  state: id,
  ...(model !== undefined ? { model } : {}),
  location: { file: 'workflows/brief.chain.yaml', line: 4, column: 3 },
});

function thrown(fn: () => unknown): { code: string; message: string; hint?: string; location?: unknown } {
  try {
    fn();
  } catch (e) {
    return e as never;
  }
  throw new Error('expected a throw');
}

describe('Function: planModels', () => {
  it('grants the Bedrock models steps name, and the project model for the steps that name none', () => {
    const plan = planModels(
      [
        step('plan', 'bedrock:anthropic.claude-3-5-haiku-20241022-v1:0'),
        step('write'),
        step('judge', 'us.anthropic.claude-sonnet-4-20250514-v1:0'),
      ],
      { model: 'bedrock:amazon.nova-micro-v1:0' },
    );
    expect(plan.bedrockModels).toEqual([
      'amazon.nova-micro-v1:0',
      'anthropic.claude-3-5-haiku-20241022-v1:0',
      'us.anthropic.claude-sonnet-4-20250514-v1:0',
    ]);
    expect(plan.environment).toEqual({ STEPFORGE_MODEL_PROVIDER: 'bedrock', STEPFORGE_MODEL: 'amazon.nova-micro-v1:0' });
    expect(plan.offlineSteps).toEqual([]);
  });

  it('reads a bare project model on modelProvider, and a bare step id on the project provider', () => {
    const plan = planModels([step('a', 'amazon.nova-lite-v1:0'), step('b')], { provider: 'bedrock', model: 'amazon.nova-micro-v1:0' });
    expect(plan.bedrockModels).toEqual(['amazon.nova-lite-v1:0', 'amazon.nova-micro-v1:0']);
  });

  it('refuses steps that would run on the echo provider (offline_model), at the first one, saying how to fix it', () => {
    const e = thrown(() => planModels([step('plan', 'bedrock:x.y-v1:0'), step('write')], {}));
    expect(e.code).toBe('offline_model');
    expect(e.message).toBe(
      'step "write" of workflow brief (workflows/brief.chain.yaml) would run on the offline echo provider (local), which only repeats its prompt and is no model; the stack refuses to deploy it unasked',
    );
    expect(e.location).toEqual({ file: 'workflows/brief.chain.yaml', line: 4, column: 3 });
    expect(e.hint).toContain('-c model=bedrock:<model id>');
    expect(e.hint).toContain('-c allowOfflineModel=true');
    expect(thrown(() => planModels([step('a', 'local:echo')], { model: 'bedrock:m' })).code).toBe('offline_model');
    expect(thrown(() => planModels([step('a')], { provider: 'local' })).code).toBe('offline_model');
  });

  it('deploys the echo provider when asked to, and lists those steps', () => {
    const plan = planModels([step('write')], { allowOffline: true });
    expect(plan.offlineSteps.map((s) => s.step)).toEqual(['write']);
    expect(plan.environment).toEqual({ STEPFORGE_MODEL_PROVIDER: 'local' });
    expect(plan.bedrockModels).toEqual([]);
  });

  it('refuses a step that names no model on a real provider with no project model (model_unset)', () => {
    const e = thrown(() => planModels([step('write')], { provider: 'bedrock' }));
    expect(e.code).toBe('model_unset');
    expect(e.message).toContain('step "write" of workflow brief');
    expect(e.hint).toContain('-c model=bedrock:<model id>');
  });

  it('reads the OpenAI-compatible key from a secret, and refuses OpenAI without one (openai_key_unset)', () => {
    const plan = planModels([step('a', 'openai:gpt-4o-mini')], { openaiApiKeySecret: 'stepforge/openai' });
    expect(plan.secrets).toEqual(['stepforge/openai']);
    expect(plan.environment['STEPFORGE_OPENAI_API_KEY']).toBe('$secret:stepforge/openai');
    expect(thrown(() => planModels([step('a', 'openai:gpt-4o-mini')], {})).code).toBe('openai_key_unset');
    // A self-hosted endpoint may need no key.
    expect(planModels([step('a', 'ollama:llama3')], { openaiBaseUrl: 'http://10.0.0.5:11434/v1' }).environment).toEqual({
      STEPFORGE_MODEL_PROVIDER: 'local',
      STEPFORGE_OPENAI_BASE_URL: 'http://10.0.0.5:11434/v1',
    });
    expect(thrown(() => planModels([], { openaiApiKeySecret: 'no spaces' })).code).toBe('invalid_model_option');
  });

  it('refuses project options that contradict each other or name no model (invalid_model_option)', () => {
    expect(thrown(() => planModels([], { provider: 'claude' })).message).toBe(
      'modelProvider must be one of bedrock, openai, local (got "claude")',
    );
    expect(thrown(() => planModels([], { provider: 'openai', model: 'bedrock:m' })).message).toBe(
      'model "bedrock:m" is on the bedrock provider but modelProvider is openai',
    );
    expect(thrown(() => planModels([], { model: 'amazon.nova-micro-v1:0' })).message).toBe(
      'model "amazon.nova-micro-v1:0" names no provider',
    );
  });

  it('refuses a model chosen at run time (dynamic_model): no grant can name it', () => {
    expect(thrown(() => planModels([step('a', '{% $states.input.model %}')], { model: 'bedrock:m' })).code).toBe('dynamic_model');
  });
});
