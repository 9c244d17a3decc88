// http_fetch, web-search and the approval policy rules, against loopback servers and dynalite.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModelHandler } from '../src/handlers/model.js';
import { createToolHandler } from '../src/handlers/tool.js';
import type { Runtime } from '../src/runtime/Runtime.js';
import { evaluatePolicy, parsePolicyRules } from '../src/tools/ToolPolicy.js';
import { parseCommand } from '../src/tools/shellTool.js';
import { envelope } from './envelope.js';
import { json, makeRuntime, startDynalite, startHttpServer, type DynamoEndpoint } from './emulators.js';

type Srv = Awaited<ReturnType<typeof startHttpServer>>;
let ddb: DynamoEndpoint;
let rt: Runtime;
let allowed: Srv;
let other: Srv;
let llm: Srv;

beforeAll(async () => {
  ddb = await startDynalite();
  other = await startHttpServer((_q, res) => json(res, 200, { secret: 'internal' }));
  allowed = await startHttpServer((req, res) => {
    if (req.url === '/redirect-out') {
      res.writeHead(302, { location: `${other.url}/x` });
      return res.end();
    }
    if (req.url?.startsWith('/search')) {
      const q = new URL(req.url, 'http://h').searchParams.get('q');
      return json(res, 200, { results: [{ title: `About ${q}`, url: 'https://example.org', snippet: '…' }] });
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('hello from allowed');
  });
  llm = await startHttpServer((req, res) => {
    const body = JSON.parse(req.body) as { model: string; messages: { content: string }[] };
    json(res, 200, {
      model: body.model,
      choices: [{ message: { content: `real-model says: ${body.messages[0]?.content}` } }],
      usage: { prompt_tokens: 3, completion_tokens: 4 },
    });
  });
  rt = await makeRuntime(
    ddb.endpoint,
    {
      tools: {
        httpAllowHosts: [`127.0.0.1:${allowed.port}`],
        webSearchUrl: `${allowed.url}/search`,
        fsRoot: process.cwd(),
        fsMaxReadBytes: 1000,
        shellEnabled: false,
        shellAllow: [],
        shellDeny: [],
        maxArgsBytes: 10_000,
      },
      policyRules: [
        { name: 'no internal hosts', tool: 'http_fetch', args: { url: '/\\/internal/' }, action: 'deny' },
        { tool: 'fs-*', action: 'approve' },
      ],
    },
    {},
    { STEPFORGE_MODEL_PROVIDER: 'openai', STEPFORGE_OPENAI_BASE_URL: `${llm.url}/v1` },
  );
});
afterAll(async () => {
  await rt.close();
  await Promise.all([allowed.close(), other.close(), llm.close(), ddb.stop()]);
});

const call = async (tool: string, args: Record<string, unknown>, id = `c${Math.random()}`) =>
  (await createToolHandler(rt)(
    envelope({ kind: 'tool', step: 'agent', runId: 'run-tools', tools: [tool], toolCall: { id, tool, args } }),
  )) as { result: Record<string, unknown>; error?: { name: string; message: string } };

describe('Function: httpFetchTool', () => {
  it('GETs an allow-listed host', async () => {
    const r = await call('http_fetch', { url: `${allowed.url}/page` });
    expect(r.result).toMatchObject({ status: 200, body: 'hello from allowed' });
  });

  it('refuses a host that is not allow-listed, and a redirect to one', async () => {
    expect((await call('http_fetch', { url: `${other.url}/x` })).error).toEqual({
      name: 'PolicyDenied',
      message: `host 127.0.0.1:${other.port} is not on the http_fetch allow-list`,
    });
    expect((await call('http_fetch', { url: `${allowed.url}/redirect-out` })).error?.name).toBe('PolicyDenied');
    expect(other.requests).toHaveLength(0);
    expect((await call('http_fetch', { url: 'file:///etc/passwd' })).error?.message).toBe(
      'only http and https URLs are allowed, got file:',
    );
  });
});

describe('Function: webSearchTool', () => {
  it('queries the configured provider', async () => {
    const r = await call('web-search', { query: 'whales' });
    expect(r.result).toEqual({ query: 'whales', results: [{ title: 'About whales', url: 'https://example.org', snippet: '…' }] });
  });
});

describe('Function: parseCommand', () => {
  it('splits as a POSIX shell would: quotes, backslash escapes, runs of whitespace', () => {
    expect(parseCommand(`  c\\at\t"a \\"b\\\\" 'c\\d'  x\\ y ""`)).toEqual(['cat', 'a "b\\', 'c\\d', 'x y', '']);
  });

  it('refuses a lone trailing backslash and an open quote by name', () => {
    expect(() => parseCommand('echo a\\')).toThrow(
      expect.objectContaining({ name: 'InvalidInput', message: 'command ends with a lone backslash' }),
    );
    expect(() => parseCommand('echo "a')).toThrow(
      expect.objectContaining({ name: 'InvalidInput', message: 'unterminated quote in command' }),
    );
  });
});

describe('Function: evaluatePolicy', () => {
  it('applies the first matching rule and allows when none matches', () => {
    const rules = parsePolicyRules([
      { tool: 'shell', args: { command: 'ls*' }, action: 'allow' },
      { name: 'no shell', tool: 'shell', action: 'deny' },
      { tool: 'mcp.*', action: 'approve' },
    ]);
    expect(evaluatePolicy(rules, 'shell', { command: 'ls -la' })).toEqual({ action: 'allow', rule: 'rule 0' });
    expect(evaluatePolicy(rules, 'shell', { command: 'cat x' })).toEqual({ action: 'deny', rule: 'no shell' });
    expect(evaluatePolicy(rules, 'mcp.docs.search', {})).toEqual({ action: 'approve', rule: 'rule 2' });
    expect(evaluatePolicy(rules, 'fs-read', {})).toEqual({ action: 'allow' });
  });

  it('rejects a misspelt rule key at once', () => {
    expect(() => parsePolicyRules([{ tool: 'x', acton: 'deny' }])).toThrow(
      expect.objectContaining({ name: 'ConfigError', message: expect.stringContaining('policy rule 0:') }),
    );
  });

  it('denies by policy through the tool handler and records it; approval without a task token is refused', async () => {
    expect((await call('http_fetch', { url: `${allowed.url}/internal/admin` })).error).toEqual({
      name: 'PolicyDenied',
      message: 'policy no internal hosts denies http_fetch',
    });
    expect((await call('fs-list', { path: '.' })).error).toEqual({
      name: 'PolicyDenied',
      message: 'policy rule 1 requires human approval for fs-list, but this state does not wait for a task token',
    });
    const types = (await rt.runs.listEvents('run-tools')).map((e) => e.type);
    expect(types).toContain('PolicyDenied');
  });
});

describe('Method: Runtime.policyFor', () => {
  it("gates a run's calls by the policy its record carries, not by the runtime's own", async () => {
    // The runtime's policy approves fs-*; this run's recorded policy denies fs-read and allows the rest.
    await rt.runs.startRun({
      workflow: 'w',
      runId: 'run-own-policy',
      policy: { sources: [{ origin: 'p.json', rules: 1 }], rules: [{ name: 'no reads', tool: 'fs-read', action: 'deny' }] },
    });
    const inRun = async (tool: string, args: Record<string, unknown>) =>
      (await createToolHandler(rt)(
        envelope({
          kind: 'tool',
          step: 'agent',
          runId: 'run-own-policy',
          tools: [tool],
          toolCall: { id: `c${Math.random()}`, tool, args },
        }),
      )) as { result: unknown; error?: { name: string; message: string } };
    expect((await inRun('fs-read', { path: 'package.json' })).error).toEqual({
      name: 'PolicyDenied',
      message: 'policy no reads denies fs-read',
    });
    expect((await inRun('fs-list', { path: '.' })).error).toBeUndefined();
    // A run that recorded none: the runtime's (fs-list asks, and this state has no token to wait on).
    expect((await call('fs-list', { path: '.' })).error?.message).toBe(
      'policy rule 1 requires human approval for fs-list, but this state does not wait for a task token',
    );
  });

  it('fails a call whose run recorded a policy that does not parse, rather than allowing it', async () => {
    await rt.runs.startRun({
      workflow: 'w',
      runId: 'run-bad-policy',
      policy: { sources: [], rules: [{ tool: 'fs-read', acton: 'deny' }] },
    });
    await expect(
      createToolHandler(rt)(
        envelope({
          kind: 'tool',
          step: 'agent',
          runId: 'run-bad-policy',
          tools: ['fs-read'],
          toolCall: { id: 'c1', tool: 'fs-read', args: { path: 'package.json' } },
        }),
      ),
    ).rejects.toMatchObject({ name: 'ConfigError', message: expect.stringContaining('policy rule 0:') });
  });
});

describe('Function: selectProvider', () => {
  it('routes model steps to the configured OpenAI-compatible endpoint', async () => {
    const r = (await createModelHandler(rt)(
      envelope({ kind: 'model', step: 'm', config: { model: 'ollama:llama3' }, inputs: { value: 'hi' } }),
    )) as Record<string, unknown>;
    expect(r).toMatchObject({
      output: 'real-model says: hi',
      provider: 'openai',
      model: 'llama3',
      usage: { inputTokens: 3, outputTokens: 4 },
    });
  });

  it('refuses a step that names no model on a real provider (ConfigError), before any call', async () => {
    const before = llm.requests.length;
    const err = (await createModelHandler(rt)(envelope({ kind: 'model', step: 'unnamed', config: {}, inputs: { value: 'hi' } })).catch(
      (e: unknown) => e,
    )) as Error;
    expect([err.name, err.message]).toEqual([
      'ConfigError',
      'the step names no model for the openai provider: give the task a model (e.g. model: "openai:gpt-4o-mini") or set STEPFORGE_MODEL to the model id steps without one use',
    ]);
    expect(llm.requests.length).toBe(before);
  });

  it('calls a DSL agent with its declared model, instructions and sampling settings (agentConfig)', async () => {
    const agentConfig = { model: 'ollama:llama3.1', instructions: 'Be terse.', temperature: 0.2, max_tokens: 50 };
    const r = (await createModelHandler(rt)(
      envelope({ kind: 'agent', step: 'writer', config: { agent: 'writer', agentConfig }, inputs: { value: 'hi' } }),
    )) as Record<string, unknown>;
    expect(r).toMatchObject({ provider: 'openai', model: 'llama3.1' });
    const sent = JSON.parse(llm.requests[llm.requests.length - 1]!.body) as Record<string, unknown>;
    expect(sent).toMatchObject({
      model: 'llama3.1',
      temperature: 0.2,
      max_tokens: 50,
      messages: [
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'hi' },
      ],
    });
    // The step's own settings (a chain task's) come before the agent's.
    await createModelHandler(rt)(
      envelope({
        kind: 'agent',
        step: 'writer2',
        config: { agent: 'writer', model: 'ollama:qwen', system: 'Own.', agentConfig },
        inputs: { value: 'hi' },
      }),
    );
    expect(JSON.parse(llm.requests[llm.requests.length - 1]!.body)).toMatchObject({
      model: 'qwen',
      messages: [
        { role: 'system', content: 'Own.' },
        { role: 'user', content: 'hi' },
      ],
    });
  });

  it('gives steps that name no model STEPFORGE_MODEL', async () => {
    const withDefault = await makeRuntime(
      ddb.endpoint,
      {},
      {},
      { STEPFORGE_MODEL_PROVIDER: 'openai', STEPFORGE_OPENAI_BASE_URL: `${llm.url}/v1`, STEPFORGE_MODEL: 'qwen2.5' },
    );
    try {
      const r = (await createModelHandler(withDefault)(
        envelope({ kind: 'model', step: 'unnamed2', config: {}, inputs: { value: 'hi' } }),
      )) as Record<string, unknown>;
      expect(r).toMatchObject({ output: 'real-model says: hi', provider: 'openai', model: 'qwen2.5' });
      expect(JSON.parse(llm.requests[llm.requests.length - 1]!.body).model).toBe('qwen2.5');
    } finally {
      await withDefault.close();
    }
  });
});
