import { isRecord } from './isRecord.js';

/** What a model call takes from a step's configuration. */
export interface ModelSettings {
  readonly model: unknown;
  readonly system?: string;
  readonly maxTokens?: number;
  readonly temperature?: number;
}

/**
 * The model settings of a step: its own `model`, `system`, `max_tokens` and `temperature` (chain
 * tasks), else those of the DSL agent it calls (`agentConfig`, the document's `agents:` entry:
 * `model`, `instructions` or `system`, `max_tokens` or `maxTokens`, `temperature`).
 */
export function modelSettings(config: Readonly<Record<string, unknown>>): ModelSettings {
  const agent = isRecord(config.agentConfig) ? config.agentConfig : {};
  const system = str(config.system) ?? str(agent.instructions) ?? str(agent.system);
  const maxTokens = num(config.max_tokens) ?? num(agent.max_tokens) ?? num(agent.maxTokens);
  const temperature = num(config.temperature) ?? num(agent.temperature);
  return {
    model: config.model ?? agent.model,
    ...(system !== undefined ? { system } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
  };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}
