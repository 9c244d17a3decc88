// The GraphN reference's YAML examples (packages/compiler/test/dsl/graphn-reference/) run on the
// embedded stack with the offline (local) provider: every example that compiles runs to SUCCEEDED,
// with its deterministic output where it has one. Function steps call the Python functions the
// examples name (fixtures/graphn-functions/, real python3), mcp_tool steps an MCP server on loopback
// with the tool they name, and Slack connector steps an incoming webhook on loopback.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../../packages/embedded/src/RunService.js';
import { REFERENCE_CASES, caseDocument, type ReferenceCase } from '../../packages/compiler/test/dsl/graphn-reference/cases.js';
import { tempProject } from './support/testIo.js';
// @ts-expect-error — a plain .mjs fixture without type declarations
import { startGraphnMcpServer } from './fixtures/graphnMcpServer.mjs';

const FUNCTIONS_DIR = fileURLToPath(new URL('./fixtures/graphn-functions/', import.meta.url));
/** The value of every secret the examples bind (the fixture functions check that it arrived). */
const SECRET = 'graphn-reference-secret';
const SECRET_IDS = ['secret_id', 'my_api_key', 'sec_abc123', 'sec_xxx'];

describe('Embedded stack: the GraphN reference examples run offline', () => {
  const project = tempProject('sf-graphn-');
  const posted: { text?: string; channel?: string }[] = [];
  let slack: Server;
  let mcp: { url: string; close(): Promise<void> };
  let stack: EmbeddedStack;
  let service: EmbeddedRunService;

  beforeAll(async () => {
    mcp = await startGraphnMcpServer();
    slack = createServer((req, res) => {
      let body = '';
      req
        .setEncoding('utf8')
        .on('data', (c: string) => (body += c))
        .on('end', () => {
          posted.push(JSON.parse(body) as { text?: string });
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        });
    });
    await new Promise<void>((r) => slack.listen(0, '127.0.0.1', () => r()));
    const env: Record<string, string> = {
      STEPFORGE_LOG_LEVEL: 'SILENT',
      STEPFORGE_FUNCTIONS_DIR: FUNCTIONS_DIR,
      STEPFORGE_MCP_SERVERS: JSON.stringify({ MyTools: { url: mcp.url } }),
      STEPFORGE_SLACK_WEBHOOK_URL: `http://127.0.0.1:${(slack.address() as AddressInfo).port}/hook`,
    };
    for (const id of SECRET_IDS) env[`STEPFORGE_SECRET_${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`] = SECRET;
    stack = await openStack({ projectDir: project.dir, inMemory: true, provider: 'local', env });
    service = new EmbeddedRunService(stack, project.dir);
  });
  afterAll(async () => {
    await stack?.close();
    await mcp?.close();
    await new Promise((r) => slack?.close(r));
    project.remove();
  });

  const runs = REFERENCE_CASES.filter(
    (c): c is ReferenceCase & { outcome: Extract<ReferenceCase['outcome'], { runs: true }> } => 'runs' in c.outcome,
  );

  it("runs more than twenty of the reference's examples", () => {
    expect(runs.length).toBeGreaterThan(20);
  });

  for (const c of runs) {
    it(`runs ${c.file} to SUCCEEDED`, async () => {
      const { entry } = await service.catalog.registerText(caseDocument(c), `graphn-reference/${c.file}`);
      const started = await service.start(entry, c.input);
      const run = await service.wait(started.run.runId);
      const details = await service.details(run.runId);
      const failed = details.steps.filter((s) => s.state === 'failed').map((s) => `${s.id}: ${JSON.stringify(s.error)}`);
      expect({ status: run.status, error: run.error, failed }).toEqual({ status: 'SUCCEEDED', error: undefined, failed: [] });
      if (c.outcome.output !== undefined) expect(run.output).toEqual(c.outcome.output);
      const text = typeof run.output === 'string' ? run.output : JSON.stringify(run.output);
      for (const part of c.outcome.outputContains ?? []) expect(text).toContain(part);
      const skipped = details.steps.filter((s) => s.state === 'skipped').map((s) => s.id);
      for (const id of c.outcome.skipped ?? []) expect(skipped, `${id} is skipped`).toContain(id);
      expect(run.workflowDisplayName).toBe(entry.displayName);
      // Every step of the example ran or was skipped by its own `when`; none is left pending.
      expect(details.steps.filter((s) => s.state === 'pending' || s.state === 'running').map((s) => s.id)).toEqual([]);
    });
  }

  it("posted the Slack connector examples' messages to the webhook, templates filled", () => {
    expect(posted.map((p) => p.text).sort()).toEqual(['Done: all checks green', 'Incident: db-1 down', 'Result: 3 alerts correlated']);
  });
});
