import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as z from 'zod';
import { RuntimeError } from '../errors/RuntimeError.js';

/** How to reach one MCP server: streamable HTTP, or a stdio child process. */
export const McpServerConfig = z.union([
  z.strictObject({ url: z.string().url(), headers: z.record(z.string(), z.string()).optional() }),
  z.strictObject({
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
  }),
]);
/** How to reach one MCP server. */
export type McpServerConfig = z.infer<typeof McpServerConfig>;

/** The text (or structured content) an MCP tool returned. */
export interface McpCallResult {
  readonly content: unknown;
  readonly text: string;
  readonly isError: boolean;
}

/** The MCP SDK's client and transports (what `mcpSdk.ts` loads). */
export interface McpSdk {
  readonly Client: typeof import('@modelcontextprotocol/sdk/client/index.js').Client;
  readonly StdioClientTransport: typeof import('@modelcontextprotocol/sdk/client/stdio.js').StdioClientTransport;
  readonly StreamableHTTPClientTransport: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport;
  /**
   * What checks a tool's structured output against its declared output schema: the SDK's
   * validator over @cfworker/json-schema (JSON Schema 2020-12, the MCP default dialect), a
   * fraction of the size of its default over ajv, which handler bundles leave out.
   */
  readonly JsonSchemaValidator: typeof import('@modelcontextprotocol/sdk/validation/cfworker').CfWorkerJsonSchemaValidator;
}

let sdkLoader: (() => Promise<McpSdk>) | undefined;

/**
 * Give the pool the MCP SDK. Only the modules that call MCP servers (the tool and mcp_tool steps)
 * do, through `mcpSdk.ts`: so the SDK (and the JSON Schema validator it brings) is bundled into
 * the Lambdas that use it and no other.
 */
export function provideMcpSdk(load: () => Promise<McpSdk>): void {
  sdkLoader = load;
}

/**
 * MCP clients (@modelcontextprotocol/sdk), one per server configuration, kept open for the
 * life of the process (a Lambda container or the embedded stack) and closed by `closeAll`.
 */
export class McpClientPool {
  readonly #clients = new Map<string, Promise<Client>>();
  /** Each client's tools that declare an output schema: the check their structured output must pass. */
  readonly #outputChecks = new WeakMap<Client, Map<string, (output: unknown) => { valid: boolean; errorMessage?: string }>>();

  async #client(server: McpServerConfig): Promise<Client> {
    const key = JSON.stringify(server);
    let p = this.#clients.get(key);
    if (!p) {
      p = (async () => {
        if (!sdkLoader)
          throw new RuntimeError(
            'ConfigError',
            'this handler was built without the MCP SDK: MCP servers are reached from the tool and mcp_tool steps',
          );
        const { Client, StdioClientTransport, StreamableHTTPClientTransport, JsonSchemaValidator } = await sdkLoader();
        // Every error, not the first only, so an output that fails its schema says all that is wrong.
        const client = new Client(
          { name: 'stepforge', version: '0.1.0' },
          { jsonSchemaValidator: new JsonSchemaValidator({ shortcircuit: false }) },
        );
        const transport =
          'url' in server
            ? new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers ?? {} } })
            : new StdioClientTransport({
                command: server.command,
                args: server.args,
                env: { PATH: process.env.PATH ?? '', ...(server.env ?? {}) },
                cwd: server.cwd,
                stderr: 'ignore',
              });
        await client.connect(transport);
        // The SDK checks a tool's output against its schema only for tools it has listed, and
        // only those of the last page it listed: so every page is listed here, once per client,
        // and the pool checks each call itself.
        const validator = new JsonSchemaValidator({ shortcircuit: false });
        const checks = new Map<string, (output: unknown) => { valid: boolean; errorMessage?: string }>();
        if (client.getServerCapabilities()?.tools) {
          let cursor: string | undefined;
          do {
            const page = await client.listTools(cursor === undefined ? undefined : { cursor });
            for (const t of page.tools) if (t.outputSchema) checks.set(t.name, validator.getValidator(t.outputSchema));
            cursor = page.nextCursor;
          } while (cursor !== undefined);
        }
        this.#outputChecks.set(client, checks);
        return client;
      })();
      this.#clients.set(key, p);
      p.catch(() => this.#clients.delete(key));
    }
    try {
      return await p;
    } catch (e) {
      throw new RuntimeError(
        'McpError',
        `cannot connect to MCP server ${'url' in server ? server.url : server.command}: ${(e as Error).message}`,
        { retryable: true, cause: e },
      );
    }
  }

  /** The server's tools (name, description, input schema). */
  async listTools(server: McpServerConfig): Promise<{ name: string; description?: string; inputSchema: unknown }[]> {
    const c = await this.#client(server);
    return (await c.listTools()).tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  }

  /** Calls one tool; an `isError` answer becomes an `McpError`. */
  async callTool(server: McpServerConfig, tool: string, args: Record<string, unknown>, timeoutMs = 60_000): Promise<McpCallResult> {
    const c = await this.#client(server);
    let r;
    try {
      r = await c.callTool({ name: tool, arguments: args }, undefined, { timeout: timeoutMs });
    } catch (e) {
      throw new RuntimeError('McpError', `MCP tool ${tool}: ${(e as Error).message}`, { cause: e, details: { tool } });
    }
    const content = (r.content ?? []) as { type: string; text?: string }[];
    const text = content
      .filter((b) => b.type === 'text')
      .map((b) => b.text ?? '')
      .join('\n');
    if (r.isError) throw new RuntimeError('McpError', `MCP tool ${tool} failed: ${text.slice(0, 500)}`, { details: { tool } });
    const check = this.#outputChecks.get(c)?.get(tool);
    if (check) {
      if (r.structuredContent === undefined)
        throw new RuntimeError('McpError', `MCP tool ${tool} declares an output schema but returned no structured content`, {
          details: { tool },
        });
      const v = check(r.structuredContent);
      if (!v.valid)
        throw new RuntimeError(
          'McpError',
          `MCP tool ${tool} returned structured content that does not match its output schema: ${v.errorMessage ?? 'invalid'}`,
          { details: { tool } },
        );
    }
    // Structured content when the tool gives it; else its text (parsed when it is JSON).
    let value: unknown = r.structuredContent;
    if (value === undefined) {
      try {
        value = JSON.parse(text);
      } catch {
        value = text;
      }
    }
    return { content: value, text, isError: false };
  }

  async closeAll(): Promise<void> {
    const all = [...this.#clients.values()];
    this.#clients.clear();
    await Promise.all(all.map(async (p) => (await p.catch(() => undefined))?.close().catch(() => undefined)));
  }
}

/** Parses a server configuration (strict: a misspelt key fails at once). */
export function parseMcpServer(raw: unknown, name: string): McpServerConfig {
  const r = McpServerConfig.safeParse(raw);
  if (!r.success)
    throw new RuntimeError(
      'ConfigError',
      `MCP server "${name}": ${r.error.issues.map((i) => `${i.path.join('.') || '(server)'}: ${i.message}`).join('; ')}`,
    );
  return r.data;
}
