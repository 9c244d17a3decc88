import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '@stepforge/cli';
import { openStack, type EmbeddedStack } from '../../packages/cli/src/stack/EmbeddedStack.js';
import { bufferIo, tempProject } from './support/testIo.js';
// @ts-expect-error — a plain .mjs fixture without type declarations
import { startHttpMcpServer } from '../../functions/test/fixtures/mcpServer.mjs';

/** A DSL workflow's own `mcp_servers` reach the mcp_tool step that names them, with no runtime setting. */
describe('Embedded stack: an mcp_tool step on the server its document declares', () => {
  const project = tempProject('sf-mcp-');
  let stack: EmbeddedStack;
  let mcp: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    mcp = await startHttpMcpServer();
    stack = await openStack({ projectDir: project.dir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
  });
  afterAll(async () => {
    await stack.close();
    await mcp.close();
    project.remove();
  });

  it('runs the tool on the declared server, and names a server declared nowhere', async () => {
    writeFileSync(join(project.dir, 'mcp.yaml'), [
      'document: { dsl: "1.0", name: mcp-sum }',
      'mcp_servers:',
      `  calc: { url: "${mcp.url}" }`,
      'steps:',
      '  - { name: add, kind: mcp_tool, server: calc, tool: add, input: { a: 20, b: 22 } }',
      '',
    ].join('\n'));
    const io = bufferIo(project.dir);
    expect(await main(['run', 'mcp.yaml', '--json'], io)).toBe(0);
    expect(JSON.parse(io.stdout())).toMatchObject({ status: 'SUCCEEDED', output: { sum: 42 } });

    writeFileSync(join(project.dir, 'nowhere.yaml'), 'document: { dsl: "1.0", name: mcp-nowhere }\nmcp_servers:\n  docs: {}\nsteps:\n  - { name: look, kind: mcp_tool, server: docs, tool: add }\n');
    const failed = bufferIo(project.dir);
    expect(await main(['run', 'nowhere.yaml'], failed)).toBe(1);
    expect(failed.stdout() + failed.stderr()).toContain('error: ConfigError: step \'look\' failed: mcp_tool step look: unknown MCP server "docs": give it a {url} or {command, args} under the document\'s mcp_servers, or in STEPFORGE_MCP_SERVERS');
  });
});
