import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '@stepforge/cli';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { bufferIo, tempProject } from './support/testIo.js';
// @ts-expect-error — a plain .mjs fixture without type declarations
import { startHttpMcpServer } from '../../packages/runtime/test/fixtures/mcpServer.mjs';

/** A DSL workflow's own `mcp_servers` reach the mcp_tool step that names them, with no runtime setting. */
describe('Embedded stack: an mcp_tool step on the server its document declares', () => {
  const project = tempProject('sf-mcp-');
  let stack: EmbeddedStack;
  let mcp: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    mcp = await startHttpMcpServer();
    // The offline provider, scripted: the agent `sum` asks for the MCP tool on its first turn.
    writeFileSync(
      join(project.dir, 'script.json'),
      JSON.stringify({
        steps: {
          sum: [{ text: 'Adding.', toolCalls: [{ tool: 'mcp.calc.add', args: { a: 20, b: 22 } }] }, { text: 'It is 42.' }],
          lost: [{ text: 'Looking.', toolCalls: [{ tool: 'mcp.nowhere.find', args: {} }] }, { text: 'No luck.' }],
        },
      }),
    );
    stack = await openStack({
      projectDir: project.dir,
      inMemory: true,
      env: { STEPFORGE_LOG_LEVEL: 'SILENT', STEPFORGE_LOCAL_SCRIPT: join(project.dir, 'script.json') },
    });
  });
  afterAll(async () => {
    await stack.close();
    await mcp.close();
    project.remove();
  });

  it('runs the tool on the declared server, and names a server declared nowhere', async () => {
    writeFileSync(
      join(project.dir, 'mcp.yaml'),
      [
        'document: { dsl: "1.0", name: mcp-sum }',
        'mcp_servers:',
        `  calc: { url: "${mcp.url}" }`,
        'steps:',
        '  add: { call: mcp_tool, server: calc, tool: add, input: { a: 20, b: 22 } }',
        '',
      ].join('\n'),
    );
    const io = bufferIo(project.dir);
    expect(await main(['run', 'mcp.yaml', '--json'], io)).toBe(0);
    expect(JSON.parse(io.stdout())).toMatchObject({ status: 'SUCCEEDED', output: { sum: 42 } });

    writeFileSync(
      join(project.dir, 'nowhere.yaml'),
      'document: { dsl: "1.0", name: mcp-nowhere }\nmcp_servers:\n  docs: {}\nsteps:\n  look: { call: mcp_tool, server: docs, tool: add }\n',
    );
    const failed = bufferIo(project.dir);
    expect(await main(['run', 'nowhere.yaml'], failed)).toBe(1);
    expect(failed.stdout() + failed.stderr()).toContain(
      "error: ConfigError: step 'look' failed: mcp_tool step look: unknown MCP server \"docs\": give it a {url} or {command, args} under the document's mcp_servers, or in STEPFORGE_MCP_SERVERS",
    );
  });

  it('gives an agent the MCP tools its grants name, on the servers the document declares', async () => {
    // MCP tools can change things: a workflow granting them needs an approval policy, here one that allows every granted call.
    writeFileSync(join(project.dir, 'policy.json'), '[]\n');
    writeFileSync(
      join(project.dir, 'agent.yaml'),
      [
        'document: { dsl: "1.0", name: mcp-agent }',
        'mcp_servers:',
        `  calc: { url: "${mcp.url}" }`,
        'agents:',
        '  adder: { instructions: "Add the numbers.", tools: [mcp.calc.add] }',
        '  seeker: { tools: [mcp.nowhere.find] }',
        'steps:',
        '  sum: { call: agent, agent: adder, input_template: "20 + 22?" }',
        '  lost: { call: agent, agent: seeker, input_template: "find it" }',
        '',
      ].join('\n'),
    );
    const io = bufferIo(project.dir);
    expect(await main(['run', 'agent.yaml', '--json'], io)).toBe(0);
    const { runId, status } = JSON.parse(io.stdout());
    expect(status).toBe('SUCCEEDED');
    const steps = await stack.runtime.runs.listSteps(runId);
    const call = steps.find((x) => x.stepId.startsWith('sum:tool'));
    expect(call).toMatchObject({ status: 'SUCCEEDED' });
    expect(JSON.stringify(call?.output)).toContain('42');
    expect(steps.find((x) => x.stepId === 'sum:reason#turn1')?.output).toBe('[offline:script] It is 42.');
    // A server declared nowhere: the model is told so (and the refusal is recorded), the run goes on.
    const refused = (await stack.runtime.runs.listEvents(runId)).filter((e) => e.type === 'UnknownTool');
    const message =
      'MCP tool "mcp.nowhere.find": unknown MCP server "nowhere": give it a {url} or {command, args} under the document\'s mcp_servers, or in STEPFORGE_MCP_SERVERS';
    expect(refused.map((e) => (e.detail as { message?: string }).message)).toEqual([message]);
    // runs show says so too, under the steps.
    const shown = bufferIo(project.dir);
    expect(await main(['runs', 'show', runId], shown)).toBe(0);
    expect(shown.stdout()).toContain('\nevents:\n  ');
    expect(shown.stdout()).toContain(`  UnknownTool  lost:tool: ${message}\n`);
    const json = bufferIo(project.dir);
    expect(await main(['runs', 'show', runId, '--json'], json)).toBe(0);
    expect(JSON.parse(json.stdout()).events).toEqual([
      expect.objectContaining({ type: 'UnknownTool', stepId: 'lost:tool', detail: expect.objectContaining({ message }) }),
    ]);
  });
});
