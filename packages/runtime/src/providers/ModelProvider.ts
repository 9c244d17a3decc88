import type { ChatMessage } from '../persistence/ConversationStore.js';

/** A tool offered to the model. */
export interface ModelTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/** One model call: the whole conversation so far plus the tools on offer. */
export interface ModelRequest {
  readonly model: string;
  readonly system?: string;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ModelTool[];
  readonly maxTokens?: number;
  readonly temperature?: number;
  /** Which step is asking (the local provider's script is keyed by it). */
  readonly stepId?: string;
  readonly turn?: number;
  /**
   * A consensus judge (`select: verbatim`): the candidates its answer must repeat exactly. Real
   * models read them in the prompt; the offline provider, which cannot judge, picks one.
   */
  readonly selectFrom?: readonly unknown[];
}

/** What the model answered, provider-neutral. */
export interface ModelResponse {
  readonly text: string;
  readonly toolCalls: readonly { readonly id: string; readonly tool: string; readonly args: unknown }[];
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number };
  /** `bedrock`, `openai`, or `local` (offline, never a real model). */
  readonly provider: string;
  readonly model: string;
  readonly stopReason?: string;
}

/** A model provider: Bedrock Converse, an OpenAI-compatible endpoint, or the offline local provider. */
export interface ModelProvider {
  readonly name: string;
  converse(request: ModelRequest): Promise<ModelResponse>;
}

/** Tool names providers accept (`^[a-zA-Z0-9_-]{1,64}$`); MCP names like `mcp.docs.search` are mapped. */
export function providerToolName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
}
