import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BedrockProvider } from '../src/providers/BedrockProvider.js';
import { OpenAiProvider } from '../src/providers/OpenAiProvider.js';
import { freePort, json, startHttpServer } from './emulators.js';

type Srv = Awaited<ReturnType<typeof startHttpServer>>;
let openai: Srv;
let bedrock: Srv;
beforeAll(async () => {
  openai = await startHttpServer((req, res) => {
    const body = JSON.parse(req.body) as { messages: { role: string }[]; model: string };
    if (body.model === 'broken') return json(res, 503, { error: 'overloaded' });
    const last = body.messages[body.messages.length - 1];
    if (last?.role === 'tool') {
      return json(res, 200, {
        model: body.model,
        choices: [{ message: { content: 'The file says hi.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 30, completion_tokens: 5 },
      });
    }
    json(res, 200, {
      model: body.model,
      choices: [
        {
          message: {
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'fs-read', arguments: '{"path":"a.txt"}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 20, completion_tokens: 7 },
    });
  });
  bedrock = await startHttpServer((req, res) => {
    const body = JSON.parse(req.body) as { messages: { role: string; content: Record<string, unknown>[] }[] };
    const last = body.messages[body.messages.length - 1];
    if (last?.content.some((b) => 'toolResult' in b)) {
      return json(res, 200, {
        output: { message: { role: 'assistant', content: [{ text: 'Done: 3 entries.' }] } },
        stopReason: 'end_turn',
        usage: { inputTokens: 40, outputTokens: 4, totalTokens: 44 },
        metrics: { latencyMs: 1 },
      });
    }
    json(res, 200, {
      output: {
        message: {
          role: 'assistant',
          content: [{ text: 'Listing.' }, { toolUse: { toolUseId: 'tu1', name: 'mcp_docs_search', input: { q: 'x' } } }],
        },
      },
      stopReason: 'tool_use',
      usage: { inputTokens: 12, outputTokens: 9, totalTokens: 21 },
      metrics: { latencyMs: 1 },
    });
  });
});
afterAll(async () => {
  await openai.close();
  await bedrock.close();
});

describe('Class: OpenAiProvider', () => {
  it('sends chat completions with tools and maps tool calls back to registry names', async () => {
    const p = new OpenAiProvider({ baseUrl: `${openai.url}/v1`, apiKey: 'sk-test-123' });
    const r = await p.converse({
      model: 'llama3',
      messages: [{ role: 'user', content: 'read a.txt' }],
      tools: [{ name: 'fs-read', description: 'read', inputSchema: { type: 'object' } }],
    });
    expect(r).toMatchObject({
      provider: 'openai',
      model: 'llama3',
      toolCalls: [{ id: 'c1', tool: 'fs-read', args: { path: 'a.txt' } }],
      usage: { inputTokens: 20, outputTokens: 7 },
    });
    const sent = openai.requests[openai.requests.length - 1]!;
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-test-123');
    expect(JSON.parse(sent.body).tools[0].function.name).toBe('fs-read');
  });

  it('sends the tool result back as a tool message and returns the final text', async () => {
    const p = new OpenAiProvider({ baseUrl: `${openai.url}/v1` });
    const r = await p.converse({
      model: 'gpt',
      tools: [],
      messages: [
        { role: 'user', content: 'read a.txt' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', tool: 'fs-read', args: { path: 'a.txt' } }] },
        { role: 'tool', toolCallId: 'c1', content: 'hi' },
      ],
    });
    expect(r.text).toBe('The file says hi.');
    const sent = JSON.parse(openai.requests[openai.requests.length - 1]!.body) as { messages: Record<string, unknown>[] };
    expect(sent.messages[1]).toMatchObject({
      role: 'assistant',
      tool_calls: [{ id: 'c1', function: { name: 'fs-read', arguments: '{"path":"a.txt"}' } }],
    });
    expect(sent.messages[2]).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'hi' });
  });

  it('turns an HTTP 503 into a retryable ProviderError', async () => {
    const p = new OpenAiProvider({ baseUrl: openai.url });
    const err = await p.converse({ model: 'broken', messages: [{ role: 'user', content: 'x' }], tools: [] }).catch((e: unknown) => e);
    expect((err as Error).name).toBe('ProviderError');
    expect((err as Error).message).toContain('HTTP 503');
    expect((err as { retryable: boolean }).retryable).toBe(true);
  });
});

describe('Class: OpenAiProvider (configuration and transport errors)', () => {
  it('refuses api.openai.com without a key before sending anything (ConfigError, not retried)', async () => {
    const err = (await new OpenAiProvider({ baseUrl: 'https://api.openai.com/v1' })
      .converse({ model: 'gpt', messages: [{ role: 'user', content: 'x' }], tools: [] })
      .catch((e: unknown) => e)) as Error & { retryable?: boolean };
    expect([err.name, err.message]).toEqual([
      'ConfigError',
      'no API key for api.openai.com: set STEPFORGE_OPENAI_API_KEY (the key, or $secret:<id>), or set STEPFORGE_OPENAI_BASE_URL to an OpenAI-compatible server that needs none (e.g. http://127.0.0.1:11434/v1 for Ollama)',
    ]);
    expect(err.retryable).not.toBe(true);
  });

  it('names what failed when the endpoint cannot be reached, not just "fetch failed"', async () => {
    const port = await freePort();
    const err = (await new OpenAiProvider({ baseUrl: `http://127.0.0.1:${port}/v1` })
      .converse({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [] })
      .catch((e: unknown) => e)) as Error & { retryable?: boolean };
    expect([err.name, err.message, err.retryable]).toEqual([
      'ProviderError',
      `openai-compatible endpoint 127.0.0.1:${port}: fetch failed (connect ECONNREFUSED 127.0.0.1:${port})`,
      true,
    ]);
  });
});

describe('Class: BedrockProvider', () => {
  const client = () =>
    new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: bedrock.url,
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      requestHandler: new NodeHttpHandler(),
    });

  it('calls Converse with a tool config and maps toolUse back to the original tool name', async () => {
    const p = new BedrockProvider(client());
    const r = await p.converse({
      model: 'anthropic.claude-3-5-haiku',
      system: 'be brief',
      messages: [{ role: 'user', content: 'search' }],
      tools: [{ name: 'mcp.docs.search', description: 's', inputSchema: { type: 'object' } }],
    });
    expect(r).toMatchObject({
      provider: 'bedrock',
      text: 'Listing.',
      toolCalls: [{ id: 'tu1', tool: 'mcp.docs.search', args: { q: 'x' } }],
      usage: { inputTokens: 12, outputTokens: 9 },
    });
    const sent = bedrock.requests[bedrock.requests.length - 1]!;
    expect(decodeURIComponent(sent.url)).toBe('/model/anthropic.claude-3-5-haiku/converse');
    const body = JSON.parse(sent.body) as Record<string, unknown>;
    expect(body.system).toEqual([{ text: 'be brief' }]);
    expect(body.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'mcp_docs_search', description: 's', inputSchema: { json: { type: 'object' } } } }],
    });
  });

  it('says which credentials to set when there are none (ConfigError, not retried), before any request', async () => {
    const before = bedrock.requests.length;
    const none = async () => {
      throw Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' });
    };
    const p = new BedrockProvider(
      new BedrockRuntimeClient({ region: 'us-east-1', endpoint: bedrock.url, credentials: none, requestHandler: new NodeHttpHandler() }),
    );
    const err = (await p
      .converse({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [] })
      .catch((e: unknown) => e)) as Error & { retryable?: boolean };
    expect([err.name, err.message, err.retryable]).toEqual([
      'ConfigError',
      'bedrock m: no AWS credentials: Could not load credentials from any providers; set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_REGION), or run offline without --provider bedrock',
      false,
    ]);
    expect(bedrock.requests.length).toBe(before);
  });

  it('sends tool results inside a user message', async () => {
    const p = new BedrockProvider(client());
    const r = await p.converse({
      model: 'm',
      tools: [],
      messages: [
        { role: 'user', content: 'list' },
        { role: 'assistant', content: 'Listing.', toolCalls: [{ id: 'tu1', tool: 'fs-list', args: {} }] },
        { role: 'tool', toolCallId: 'tu1', content: '3 entries' },
      ],
    });
    expect(r.text).toBe('Done: 3 entries.');
    const body = JSON.parse(bedrock.requests[bedrock.requests.length - 1]!.body) as { messages: unknown[] };
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: 'list' }] },
      { role: 'assistant', content: [{ text: 'Listing.' }, { toolUse: { toolUseId: 'tu1', name: 'fs-list', input: {} } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tu1', content: [{ text: '3 entries' }] } }] },
    ]);
  });
});

describe('Function: parseModelSpec', () => {
  it('splits a provider prefix, maps ollama and vllm to the OpenAI-compatible provider, and reads anything else as a bare id', async () => {
    const { parseModelSpec } = await import('../src/providers/parseModelSpec.js');
    expect(parseModelSpec('bedrock:us.anthropic.claude-3-5-haiku-20241022-v1:0')).toEqual({
      prefix: 'bedrock',
      modelId: 'us.anthropic.claude-3-5-haiku-20241022-v1:0',
    });
    expect(parseModelSpec('ollama:llama3')).toEqual({ prefix: 'openai', modelId: 'llama3' });
    expect(parseModelSpec('vllm:m')).toEqual({ prefix: 'openai', modelId: 'm' });
    expect(parseModelSpec('local:echo')).toEqual({ prefix: 'local', modelId: 'echo' });
    expect(parseModelSpec('anthropic.claude-v2:1')).toEqual({ modelId: 'anthropic.claude-v2:1' });
    expect(parseModelSpec(undefined)).toEqual({ modelId: 'default' });
    expect(parseModelSpec('')).toEqual({ modelId: 'default' });
  });
});
