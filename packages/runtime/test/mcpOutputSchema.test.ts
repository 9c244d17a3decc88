// MCP tools that declare an output schema: their structured output is checked against it (by the
// validator over @cfworker/json-schema the pool gives every client), over streamable HTTP on loopback.
// The server is the SDK's low-level one, which sends whatever the test says, so it can break its own schema.
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpClientPool } from '../src/mcp/McpClientPool.js';
import CfworkerAjv from '../src/bundled/CfworkerAjv.js';
import addCfworkerFormats from '../src/bundled/addCfworkerFormats.js';
import '../src/mcp/mcpSdk.js';

const STATS_SCHEMA = {
  type: 'object',
  properties: { count: { type: 'integer', minimum: 0 }, at: { type: 'string', format: 'date-time' } },
  required: ['count', 'at'],
  additionalProperties: false,
};

/** `stats` answers the structured content its `answer` argument gives; `plain` declares no output schema. */
function mcpServer(): Server {
  const server = new Server({ name: 'lying', version: '1.0.0' }, { capabilities: { tools: {} } });
  // Two pages: the SDK keeps the output schemas of the last page it listed only, so `stats` is
  // checked by the pool's own validators.
  server.setRequestHandler(ListToolsRequestSchema, async (req) =>
    req.params?.cursor === 'page2'
      ? { tools: [{ name: 'plain', inputSchema: { type: 'object' as const } }] }
      : { tools: [{ name: 'stats', inputSchema: { type: 'object' as const }, outputSchema: STATS_SCHEMA }], nextCursor: 'page2' },
  );
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const answer = req.params.arguments?.['answer'];
    if (req.params.name === 'plain') return { content: [{ type: 'text', text: '{"free":"form"}' }] };
    return {
      content: [{ type: 'text', text: JSON.stringify(answer ?? null) }],
      ...(answer === undefined ? {} : { structuredContent: answer as Record<string, unknown> }),
    };
  });
  return server;
}

let http: HttpServer;
let url: string;
const pool = new McpClientPool();

beforeAll(async () => {
  http = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const server = mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await pool.closeAll();
  http.closeAllConnections();
  await new Promise((r) => http.close(r));
});

describe('Class: McpClientPool (output schemas)', () => {
  it('answers structured content that matches the output schema', async () => {
    const answer = { count: 3, at: '2026-12-06T21:00:00Z' };
    const r = await pool.callTool({ url }, 'stats', { answer });
    expect(r.content).toEqual(answer);
  });

  it('refuses structured content that breaks the schema, naming every error', async () => {
    const err = await pool.callTool({ url }, 'stats', { answer: { count: -1, at: 'yesterday', extra: true } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'McpError', details: { tool: 'stats' } });
    const message = (err as Error).message;
    expect(message).toMatch(/^MCP tool stats returned structured content that does not match its output schema: /);
    expect(message).toContain('#/count: -1 is less than 0');
    expect(message).toContain('#/at: String does not match format "date-time"');
    expect(message).toContain('Property "extra" does not match additional properties schema');
  });

  it('refuses an answer without structured content from a tool that declares an output schema', async () => {
    const err = await pool.callTool({ url }, 'stats', {}).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'McpError', details: { tool: 'stats' } });
    expect((err as Error).message).toBe('MCP tool stats declares an output schema but returned no structured content');
  });

  it('leaves a tool without an output schema free-form', async () => {
    expect((await pool.callTool({ url }, 'plain', {})).content).toEqual({ free: 'form' });
  });
});

// The Lambda bundles put CfworkerAjv where the SDK imports ajv: its default validator, built on it, still validates.
describe('Class: CfworkerAjv', () => {
  const validator = new AjvJsonSchemaValidator(addCfworkerFormats(new CfworkerAjv({ allErrors: true })) as never);

  it("serves the SDK's ajv validator: valid data passes, invalid data fails with every error", () => {
    const check = validator.getValidator(STATS_SCHEMA);
    expect(check({ count: 1, at: '2026-12-06T21:00:00Z' })).toEqual({
      valid: true,
      data: { count: 1, at: '2026-12-06T21:00:00Z' },
      errorMessage: undefined,
    });
    const bad = check({ count: 1.5, at: 'now' });
    expect(bad.valid).toBe(false);
    expect(bad.errorMessage).toContain('#/count Instance type "number" is invalid. Expected "integer".');
    expect(bad.errorMessage).toContain('#/at String does not match format "date-time"');
  });

  it('finds a schema compiled before by its $id', () => {
    const ajv = new CfworkerAjv();
    const compiled = ajv.compile({ $id: 'urn:test:n', type: 'number' });
    expect(ajv.getSchema('urn:test:n')).toBe(compiled);
    expect(ajv.getSchema('urn:test:other')).toBeUndefined();
    expect(compiled('x')).toBe(false);
    expect(ajv.errorsText(compiled.errors)).toContain('Instance type "string" is invalid. Expected "number".');
    expect(compiled(2)).toBe(true);
    expect(compiled.errors).toBeNull();
    expect(ajv.errorsText(null)).toBe('No errors');
  });
});
