import { RuntimeError } from '../errors/RuntimeError.js';
import type { ChatMessage } from '../persistence/ConversationStore.js';
import { providerToolName, type ModelProvider, type ModelRequest, type ModelResponse } from './ModelProvider.js';

/** Any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM, …). */
export class OpenAiProvider implements ModelProvider {
  readonly name = 'openai';
  constructor(private readonly options: { baseUrl: string; apiKey?: string; timeoutMs?: number }) {}

  async converse(req: ModelRequest): Promise<ModelResponse> {
    const url = `${this.options.baseUrl.replace(/\/$/, '')}/chat/completions`;
    const host = new URL(url).host;
    // OpenAI itself answers every request without a key with 401; a local server may need none.
    if (!this.options.apiKey && host === 'api.openai.com') {
      throw new RuntimeError(
        'ConfigError',
        'no API key for api.openai.com: set STEPFORGE_OPENAI_API_KEY (the key, or $secret:<id>), or set STEPFORGE_OPENAI_BASE_URL to an OpenAI-compatible server that needs none (e.g. http://127.0.0.1:11434/v1 for Ollama)',
      );
    }
    const names = new Map(req.tools.map((t) => [providerToolName(t.name), t.name]));
    const body = {
      model: req.model,
      messages: [...(req.system ? [{ role: 'system', content: req.system }] : []), ...req.messages.map(toOpenAi)],
      ...(req.tools.length > 0
        ? {
            tools: req.tools.map((t) => ({
              type: 'function',
              function: { name: providerToolName(t.name), description: t.description, parameters: t.inputSchema },
            })),
          }
        : {}),
      ...(req.maxTokens !== undefined ? { max_tokens: req.maxTokens } : {}),
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    };
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 120_000),
      });
    } catch (e) {
      // fetch says only "fetch failed"; what failed (ECONNREFUSED, ENOTFOUND, …) is its cause.
      const cause = (e as { cause?: { message?: string } }).cause?.message;
      throw new RuntimeError('ProviderError', `openai-compatible endpoint ${host}: ${(e as Error).message}${cause ? ` (${cause})` : ''}`, {
        retryable: true,
        cause: e,
      });
    }
    const text = await res.text();
    if (!res.ok) {
      throw new RuntimeError('ProviderError', `openai-compatible endpoint answered HTTP ${res.status}: ${text.slice(0, 300)}`, {
        retryable: res.status === 429 || res.status >= 500,
        details: { status: res.status },
      });
    }
    let json: OpenAiResponse;
    try {
      json = JSON.parse(text) as OpenAiResponse;
    } catch {
      throw new RuntimeError('ProviderError', 'openai-compatible endpoint returned invalid JSON');
    }
    const choice = json.choices?.[0];
    if (!choice?.message) throw new RuntimeError('ProviderError', 'openai-compatible endpoint returned no choices');
    const toolCalls = (choice.message.tool_calls ?? []).map((c) => {
      let args: unknown = {};
      try {
        args = c.function.arguments ? JSON.parse(c.function.arguments) : {};
      } catch {
        args = { _raw: c.function.arguments };
      }
      return { id: c.id, tool: names.get(c.function.name) ?? c.function.name, args };
    });
    return {
      text: choice.message.content ?? '',
      toolCalls,
      usage: { inputTokens: json.usage?.prompt_tokens ?? 0, outputTokens: json.usage?.completion_tokens ?? 0 },
      provider: 'openai',
      model: json.model ?? req.model,
      stopReason: choice.finish_reason,
    };
  }
}

interface OpenAiResponse {
  model?: string;
  choices?: {
    message?: { content?: string | null; tool_calls?: { id: string; function: { name: string; arguments?: string } }[] };
    finish_reason?: string;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

function toOpenAi(m: ChatMessage): Record<string, unknown> {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
  if (m.role === 'assistant' && m.toolCalls && m.toolCalls.length > 0) {
    return {
      role: 'assistant',
      content: m.content || null,
      tool_calls: m.toolCalls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: providerToolName(c.tool), arguments: JSON.stringify(c.args ?? {}) },
      })),
    };
  }
  return { role: m.role, content: m.content };
}
