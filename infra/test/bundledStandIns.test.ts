// The packages the Lambda bundles replace (packages/runtime/src/bundled/) at work in a real bundle:
// a bundle built with the handlers' settings sends signed SQS and Bedrock requests to a loopback
// endpoint and X-Ray subsegments to a loopback daemon. The endpoint checks each request's SigV4
// signature with the SDK's own SHA-256 (the bundle signs with its stand-in), answers SQS with the
// MD5 the client checks, and answers a Bedrock event stream the bundle has no codec for.
import { createHash } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, describe, expect, it } from 'vitest';
import { buildWithHandlerSettings } from '../lib/bundling/buildHandlerBundle.js';
import { ROOT } from './synthFixtureStack.js';

const out = mkdtempSync(join(tmpdir(), 'stepforge-bundled-stand-ins-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** True when the request's SigV4 signature is the one the SDK's own signer computes for it. */
async function signatureHolds(req: IncomingMessage, body: string): Promise<boolean> {
  const m = /Credential=[^/]+\/\d+\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]+)/.exec(
    req.headers.authorization ?? '',
  );
  if (!m) return false;
  const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
  const headers = Object.fromEntries(m[3]!.split(';').map((h) => [h, String(req.headers[h])]));
  const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(String(req.headers['x-amz-date']))!;
  const signer = new SignatureV4({
    service: m[2]!,
    region: m[1]!,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    sha256: Sha256,
  });
  const signed = await signer.sign(
    {
      method: req.method ?? 'POST',
      protocol: 'http:',
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body,
    },
    { signingDate: new Date(Date.UTC(+date[1]!, +date[2]! - 1, +date[3]!, +date[4]!, +date[5]!, +date[6]!)) },
  );
  return String(signed.headers.authorization).endsWith(`Signature=${m[4]}`);
}

describe('What the bundles replace, in a bundle', () => {
  it('signs and checks AWS requests, traces them to X-Ray, and refuses an event stream with a ConfigError', async () => {
    const checked: { path: string; signed: boolean }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        void signatureHolds(req, body).then((signed) => {
          checked.push({ path: req.url ?? '', signed });
          if (req.headers['x-amz-target'] === 'AmazonSQS.SendMessage') {
            const md5 = createHash('md5')
              .update((JSON.parse(body) as { MessageBody: string }).MessageBody)
              .digest('hex');
            res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
            res.end(JSON.stringify({ MessageId: 'message-1', MD5OfMessageBody: md5 }));
          } else if (req.url === '/model/m/converse') {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(
              JSON.stringify({
                output: { message: { role: 'assistant', content: [{ text: 'hello from loopback' }] } },
                stopReason: 'end_turn',
                usage: { inputTokens: 1, outputTokens: 3, totalTokens: 4 },
                metrics: { latencyMs: 1 },
              }),
            );
          } else {
            res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
            res.end();
          }
        });
      });
    });
    const daemon = createSocket('udp4');
    const traced: string[] = [];
    daemon.on('message', (m) => traced.push(m.toString()));
    try {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      await new Promise<void>((r) => daemon.bind(0, '127.0.0.1', r));
      const outfile = join(out, 'awsClients.mjs');
      const built = await buildWithHandlerSettings(ROOT, join(ROOT, 'infra/test/fixtures/bundled/awsClients.ts'), outfile);
      expect(built.warnings).toEqual([]);
      const { stdout } = await promisify(execFile)(process.execPath, [outfile], {
        env: {
          PATH: process.env.PATH,
          STEPFORGE_TEST_ENDPOINT: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          // As on Lambda: the SDK's start-up there, and an invocation's trace header.
          LAMBDA_TASK_ROOT: out,
          AWS_LAMBDA_FUNCTION_NAME: 'stepforge-tool',
          AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
          _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
          AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${(daemon.address() as AddressInfo).port}`,
        },
      });
      const xrayVersion = (
        JSON.parse(readFileSync(join(ROOT, 'node_modules/aws-xray-sdk-core/package.json'), 'utf8')) as { version: string }
      ).version;
      expect(JSON.parse(stdout)).toEqual({
        xray: { sdk: 'X-Ray for Node.js', sdk_version: xrayVersion, package: 'aws-xray-sdk-core' },
        sqs: 'message-1',
        converse: 'hello from loopback',
        stream: { name: 'ConfigError', message: expect.stringContaining('the Lambda bundles carry no AWS event-stream codec') },
      });
      expect(checked).toEqual([
        { path: '/', signed: true },
        { path: '/model/m/converse', signed: true },
        { path: '/model/m/converse-stream', signed: true },
      ]);
      await expect.poll(() => traced.length).toBeGreaterThan(0);
      const subsegment = JSON.parse(traced[0]!.split('\n')[1]!) as Record<string, unknown>;
      expect(subsegment).toMatchObject({
        name: 'SQS',
        type: 'subsegment',
        trace_id: '1-5759e988-bd862e3fe1be46a994272793',
        parent_id: '53995c3f42cd8ad8',
        namespace: 'aws',
        aws: { operation: 'SendMessage', region: 'us-east-1', queue_url: expect.stringContaining('/000000000000/approvals') },
        http: { response: { status: 200 } },
      });
    } finally {
      server.close();
      daemon.close();
    }
  }, 60_000);

  it('calls MCP tools over stdio and streamable HTTP as the tool and mcp_tool bundles do', async () => {
    const mcpServer = join(ROOT, 'packages/runtime/test/fixtures/mcpServer.mjs');
    const { startHttpMcpServer } = (await import(mcpServer)) as { startHttpMcpServer(): Promise<{ url: string; close(): Promise<void> }> };
    const http = await startHttpMcpServer();
    try {
      const outfile = join(out, 'mcpClients.mjs');
      const built = await buildWithHandlerSettings(ROOT, join(ROOT, 'infra/test/fixtures/bundled/mcpClients.ts'), outfile);
      expect(built.warnings).toEqual([]);
      const inputs = Object.keys(built.metafile.inputs);
      expect(inputs.filter((f) => /node_modules\/(cross-spawn|pkce-challenge|zod-to-json-schema|ajv)\//.test(f))).toEqual([]);
      const { stdout } = await promisify(execFile)(process.execPath, [outfile], {
        env: { PATH: process.env.PATH, STEPFORGE_TEST_MCP_SERVER: mcpServer, STEPFORGE_TEST_MCP_URL: http.url },
      });
      expect(JSON.parse(stdout)).toEqual({
        stdio: 'FROM A BUNDLE',
        http: { sum: 42 },
        missing: {
          name: 'McpError',
          message: expect.stringMatching(/^cannot connect to MCP server \/nonexistent\/stepforge-mcp-server: .*ENOENT/),
        },
      });
    } finally {
      await http.close();
    }
  }, 60_000);
});
