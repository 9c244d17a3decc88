// Connector, function and mcp_tool handlers against real emulators on loopback: dynalite,
// fauxqs (SQS), loopback HTTP servers (webhooks, Slack, EventBridge's JSON API), MCP servers.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnectorHandler } from '../src/handlers/connector.js';
import { createFunctionHandler } from '../src/handlers/function.js';
import { createMcpToolHandler } from '../src/handlers/mcp_tool.js';
import { createLocalHandlers } from '../src/createLocalHandlers.js';
import type { Runtime } from '../src/runtime/Runtime.js';
import { sqsClient } from '../src/runtime/sqsClient.js';
import { envelope } from './envelope.js';
import { json, makeRuntime, startDynalite, startHttpServer, type DynamoEndpoint, startSqs, type SqsEndpoint } from './emulators.js';
// @ts-expect-error — a plain .mjs fixture without type declarations
import { startHttpMcpServer } from './fixtures/mcpServer.mjs';

const mcpFixture = fileURLToPath(new URL('./fixtures/mcpServer.mjs', import.meta.url));
let ddb: DynamoEndpoint;
let sqs: SqsEndpoint;
let rt: Runtime;
let queueUrl: string;
let web: Awaited<ReturnType<typeof startHttpServer>>;
let mcpHttp: { url: string; close(): Promise<void> };

beforeAll(async () => {
  [ddb, sqs] = await Promise.all([startDynalite(), startSqs()]);
  queueUrl = await sqs.createQueue('events');
  web = await startHttpServer((req, res) => {
    if (req.url === '/api/chat.postMessage') {
      const b = JSON.parse(req.body) as { channel: string };
      if (req.headers.authorization !== 'Bearer xoxb-test-token') return json(res, 200, { ok: false, error: 'invalid_auth' });
      return json(res, 200, { ok: true, channel: b.channel, ts: '1700000000.000100' });
    }
    if (req.headers['x-amz-target'] === 'AWSEvents.PutEvents') {
      const b = JSON.parse(req.body) as { Entries: unknown[] };
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      return res.end(JSON.stringify({ FailedEntryCount: 0, Entries: b.Entries.map((_e, i) => ({ EventId: `evt-${i}` })) }));
    }
    if (req.url === '/fail') return json(res, 500, { error: 'down' });
    json(res, 200, { received: true });
  });
  mcpHttp = await startHttpMcpServer();
  const fnDir = mkdtempSync(join(tmpdir(), 'sf-fn-'));
  mkdirSync(join(fnDir, 'text'));
  writeFileSync(
    join(fnDir, 'text', 'wordCount.ts'),
    'export default function wordCount(input: { text: string }, ctx: { secrets: Record<string, string> }): { words: number; hasKey: boolean } {\n  return { words: input.text.split(/\\s+/).filter(Boolean).length, hasKey: ctx.secrets.db_password === "hunter2-long" };\n}\n',
  );
  writeFileSync(join(fnDir, 'boom.mjs'), 'export default () => { throw new TypeError("bad input shape"); };\n');
  rt = await makeRuntime(
    ddb.endpoint,
    {
      endpoints: { sqs: sqs.endpoint, eventbridge: web.url },
      connectors: { slackApiUrl: `${web.url}/api`, slackToken: '$secret:slack_token' },
      userFunctionsDir: fnDir,
      mcpServers: { calc: { url: mcpHttp.url }, local: { command: process.execPath, args: [mcpFixture, 'stdio'] } },
    },
    {},
    {
      STEPFORGE_SECRET_SLACK_TOKEN: 'xoxb-test-token',
      STEPFORGE_SECRET_DB_PASSWORD: 'hunter2-long',
      STEPFORGE_HTTP_ALLOW_HOSTS: new URL(web.url).host,
    },
  );
});
afterAll(async () => {
  await rt.close();
  await Promise.all([web.close(), mcpHttp.close(), sqs.stop(), ddb.stop()]);
});

describe('Function: createConnectorHandler', () => {
  it('posts a webhook with an Idempotency-Key header', async () => {
    const h = createConnectorHandler(rt);
    const r = (await h(
      envelope({
        kind: 'connector',
        step: 'hook',
        config: { connector: 'http', action: 'request' },
        inputs: { value: { url: `${web.url}/hook`, body: { a: 1 } } },
      }),
    )) as { output: { status: number; body: unknown; idempotencyKey: string } };
    expect(r.output.status).toBe(200);
    expect(r.output.body).toEqual({ received: true });
    const sent = web.requests.find((x) => x.url === '/hook');
    expect(sent?.headers['idempotency-key']).toBe(r.output.idempotencyKey);
    expect(r.output.idempotencyKey).toMatch(/^run-.*:hook:[0-9a-f]{24}$/);
    expect(sent?.body).toBe('{"a":1}');
  });

  it('fails with a retryable ConnectorError on HTTP 500', async () => {
    const h = createConnectorHandler(rt);
    const err = await h(
      envelope({ kind: 'connector', step: 'hook2', config: { connector: 'http' }, inputs: { value: { url: `${web.url}/fail` } } }),
    ).catch((e: unknown) => e);
    expect((err as Error).name).toBe('ConnectorError');
    expect((err as Error).message).toMatch(/^http\.request: 127\.0\.0\.1:\d+ answered HTTP 500$/);
  });

  it('sends a Slack message through the Web API with a token from the secrets', async () => {
    const h = createConnectorHandler(rt);
    const r = (await h(
      envelope({
        kind: 'connector',
        step: 'slack',
        config: { connector: 'slack.send_message' },
        inputs: { value: { channel: '#ops', text: 'hello' } },
      }),
    )) as { output: unknown };
    expect(r.output).toEqual({ ok: true, channel: '#ops', ts: '1700000000.000100' });
    expect(JSON.parse(web.requests.find((x) => x.url === '/api/chat.postMessage')?.body ?? '{}')).toEqual({
      channel: '#ops',
      text: 'hello',
    });
  });

  it('sends an SQS message to fauxqs', async () => {
    const h = createConnectorHandler(rt);
    const r = (await h(
      envelope({
        kind: 'connector',
        step: 'q',
        config: { connector: 'sqs', action: 'send_message' },
        inputs: { value: { queueUrl, body: { order: 7 } } },
      }),
    )) as { output: { messageId: string } };
    expect(r.output.messageId).toMatch(/.+/);
    const got = await sqsClient(rt).send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 1 }));
    expect(got.Messages?.map((m) => m.Body)).toEqual(['{"order":7}']);
  });

  it('puts EventBridge events through the configured endpoint', async () => {
    const h = createConnectorHandler(rt);
    const r = (await h(
      envelope({
        kind: 'connector',
        step: 'eb',
        config: { connector: 'eventbridge', action: 'put_events' },
        inputs: { value: { entries: [{ source: 'stepforge.test', detailType: 'Done', detail: { x: 1 } }] } },
      }),
    )) as { output: unknown };
    expect(r.output).toEqual({ eventIds: ['evt-0'] });
    const sent = web.requests.find((x) => x.headers['x-amz-target'] === 'AWSEvents.PutEvents');
    expect(JSON.parse(sent?.body ?? '{}')).toEqual({ Entries: [{ Source: 'stepforge.test', DetailType: 'Done', Detail: '{"x":1}' }] });
  });

  it('names an unknown connector action', async () => {
    const err = await createConnectorHandler(rt)(
      envelope({ kind: 'connector', step: 'x', config: { connector: 'slack', action: 'delete_workspace' } }),
    ).catch((e: unknown) => e);
    expect((err as Error).name).toBe('ConnectorError');
    expect((err as Error).message).toBe('connector "slack" has no action "delete_workspace" (known: send_message)');
  });
});

describe('Function: createFunctionHandler', () => {
  it('imports a TypeScript user function and passes its secret bindings as arguments', async () => {
    const h = createFunctionHandler(rt);
    const r = (await h(
      envelope({
        kind: 'function',
        step: 'count',
        config: { function: 'text/wordCount' },
        secrets: ['db_password'],
        inputs: { value: { text: 'one two  three' } },
      }),
    )) as { output: unknown };
    expect(r.output).toEqual({ words: 3, hasKey: true });
  });

  it('wraps a thrown error as FunctionError', async () => {
    const err = await createFunctionHandler(rt)(envelope({ kind: 'function', step: 'b', config: { function: 'boom' } })).catch(
      (e: unknown) => e,
    );
    expect((err as Error).name).toBe('FunctionError');
    expect((err as Error).message).toBe('function boom threw TypeError: bad input shape');
  });

  it('refuses a function name that climbs out of the functions folder', async () => {
    const err = await createFunctionHandler(rt)(envelope({ kind: 'function', step: 'c', config: { function: '../../etc/passwd' } })).catch(
      (e: unknown) => e,
    );
    expect((err as Error).name).toBe('PolicyDenied');
  });
});

describe('Function: createMcpToolHandler', () => {
  it('calls a tool on an MCP server over streamable HTTP', async () => {
    const h = createMcpToolHandler(rt);
    const r = (await h(
      envelope({ kind: 'mcp_tool', step: 'sum', config: { server: 'calc', tool: 'add' }, inputs: { value: { a: 2, b: 40 } } }),
    )) as { output: unknown };
    expect(r.output).toEqual({ sum: 42 });
  });

  it('calls a tool on an MCP server over stdio', async () => {
    const h = createMcpToolHandler(rt);
    const r = (await h(
      envelope({ kind: 'mcp_tool', step: 'loud', config: { server: 'local', tool: 'shout', args: { text: 'hi there' } } }),
    )) as { output: unknown };
    expect(r.output).toBe('HI THERE');
  });

  it("uses the server the workflow document declares (serverConfig), which the deployment's STEPFORGE_MCP_SERVERS overrides", async () => {
    const h = createMcpToolHandler(rt);
    const declared = (await h(
      envelope({
        kind: 'mcp_tool',
        step: 'sum2',
        config: { server: 'docs', tool: 'add', serverConfig: { url: mcpHttp.url } },
        inputs: { value: { a: 1, b: 2 } },
      }),
    )) as { output: unknown };
    expect(declared.output).toEqual({ sum: 3 });
    // 'calc' is also in the runtime's servers: that definition wins over a stale one in the document.
    const overridden = (await h(
      envelope({
        kind: 'mcp_tool',
        step: 'sum3',
        config: { server: 'calc', tool: 'add', serverConfig: { url: 'http://127.0.0.1:9/mcp' } },
        inputs: { value: { a: 5, b: 5 } },
      }),
    )) as { output: unknown };
    expect(overridden.output).toEqual({ sum: 10 });
    const err = (await h(envelope({ kind: 'mcp_tool', step: 'nowhere', config: { server: 'nowhere', tool: 'add' } })).catch(
      (e: unknown) => e,
    )) as Error;
    expect([err.name, err.message]).toEqual([
      'ConfigError',
      'mcp_tool step nowhere: unknown MCP server "nowhere": give it a {url} or {command, args} under the document\'s mcp_servers, or in STEPFORGE_MCP_SERVERS',
    ]);
  });

  it('turns a tool error answer into McpError', async () => {
    const err = await createMcpToolHandler(rt)(
      envelope({ kind: 'mcp_tool', step: 'f', config: { server: 'calc', tool: 'shout', args: { text: 'fail' } } }),
    ).catch((e: unknown) => e);
    expect((err as Error).name).toBe('McpError');
    expect((err as Error).message).toBe('MCP tool shout failed: refusing to shout fail');
  });
});

describe('Function: createLocalHandlers', () => {
  it('maps the five placeholder function names to working handlers over one runtime', async () => {
    const { handlers, runtime } = createLocalHandlers(rt);
    expect(runtime).toBe(rt);
    expect(Object.keys(handlers).sort()).toEqual([
      'ConnectorStepFunction',
      'FunctionStepFunction',
      'McpToolStepFunction',
      'ModelStepFunction',
      'ToolStepFunction',
    ]);
    const r = (await handlers.ModelStepFunction!(envelope({ kind: 'model', step: 'm', inputs: { value: 'ping' } }))) as { output: string };
    expect(r.output).toBe('[offline:echo] ping');
  });
});
