import { ConverseCommand, type BedrockRuntimeClient, type ContentBlock, type Message } from '@aws-sdk/client-bedrock-runtime';
import { RuntimeError } from '../errors/RuntimeError.js';
import type { ChatMessage } from '../persistence/ConversationStore.js';
import { providerToolName, type ModelProvider, type ModelRequest, type ModelResponse } from './ModelProvider.js';

/** Amazon Bedrock through the Converse API, with tool use. */
export class BedrockProvider implements ModelProvider {
  readonly name = 'bedrock';
  constructor(private readonly client: BedrockRuntimeClient) {}

  async converse(req: ModelRequest): Promise<ModelResponse> {
    const names = new Map(req.tools.map((t) => [providerToolName(t.name), t.name]));
    let out;
    try {
      out = await this.client.send(
        new ConverseCommand({
          modelId: req.model,
          messages: toBedrockMessages(req.messages),
          ...(req.system ? { system: [{ text: req.system }] } : {}),
          ...(req.tools.length > 0
            ? {
                toolConfig: {
                  tools: req.tools.map((t) => ({
                    toolSpec: { name: providerToolName(t.name), description: t.description, inputSchema: { json: t.inputSchema as never } },
                  })),
                },
              }
            : {}),
          ...(req.maxTokens !== undefined || req.temperature !== undefined
            ? {
                inferenceConfig: {
                  ...(req.maxTokens !== undefined ? { maxTokens: req.maxTokens } : {}),
                  ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
                },
              }
            : {}),
        }),
      );
    } catch (e) {
      const name = (e as { name?: string }).name ?? 'Error';
      // The SDK's own wording ("Could not load credentials from any providers") does not say what to set.
      if (name === 'CredentialsProviderError') {
        throw new RuntimeError(
          'ConfigError',
          `bedrock ${req.model}: no AWS credentials: ${(e as Error).message}; set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_REGION), or run offline without --provider bedrock`,
          { cause: e },
        );
      }
      const retryable =
        ['ThrottlingException', 'ServiceUnavailableException', 'InternalServerException', 'ModelNotReadyException'].includes(name) ||
        (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === undefined;
      throw new RuntimeError('ProviderError', `bedrock ${req.model}: ${name}: ${(e as Error).message}`, {
        retryable,
        cause: e,
        details: { code: name },
      });
    }
    const content = out.output?.message?.content ?? [];
    const text = content.map((b) => b.text ?? '').join('');
    const toolCalls = content
      .filter((b) => b.toolUse)
      .map((b) => ({
        id: b.toolUse?.toolUseId ?? '',
        tool: names.get(b.toolUse?.name ?? '') ?? b.toolUse?.name ?? '',
        args: b.toolUse?.input ?? {},
      }));
    return {
      text,
      toolCalls,
      usage: { inputTokens: out.usage?.inputTokens ?? 0, outputTokens: out.usage?.outputTokens ?? 0 },
      provider: 'bedrock',
      model: req.model,
      stopReason: out.stopReason,
    };
  }
}

/** Converse wants alternating user/assistant messages; tool results go back inside a user message. */
function toBedrockMessages(messages: readonly ChatMessage[]): Message[] {
  const out: Message[] = [];
  const push = (role: 'user' | 'assistant', block: ContentBlock) => {
    const last = out[out.length - 1];
    if (last && last.role === role) last.content = [...(last.content ?? []), block];
    else out.push({ role, content: [block] });
  };
  for (const m of messages) {
    if (m.role === 'system') continue;
    if (m.role === 'tool') {
      push('user', { toolResult: { toolUseId: m.toolCallId ?? '', content: [{ text: m.content }] } });
    } else if (m.role === 'assistant') {
      if (m.content) push('assistant', { text: m.content });
      for (const c of m.toolCalls ?? [])
        push('assistant', { toolUse: { toolUseId: c.id, name: providerToolName(c.tool), input: (c.args ?? {}) as never } });
    } else {
      push('user', { text: m.content });
    }
  }
  return out;
}
