// `stepforge run` on a workflow with mcp_tool steps, as a user runs it: the real CLI in its own
// process. The run succeeding is not enough: the command must also end, which it only does when
// the stack closes every MCP client it opened (a stdio server's child process, an HTTP client's
// connections) along with everything else.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, STEPFORGE_BIN, tempProject } from './support/testIo.js';
import { isProcessAlive } from '../support/isProcessAlive.js';
// @ts-expect-error — a plain .mjs fixture without type declarations
import { startHttpMcpServer } from '../../packages/runtime/test/fixtures/mcpServer.mjs';

const FIXTURE = join(REPO, 'packages', 'runtime', 'test', 'fixtures', 'mcpServer.mjs');
/** How long the command may take, start to exit, before the test calls it hung. */
const EXIT_WITHIN_MS = 45_000;

interface Ended {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when the process had to be killed because it had not ended in time. */
  readonly hung: boolean;
}

/** Runs the real CLI and waits for the process to end, killing it (and saying so) if it does not in time. */
function runCli(cwd: string, argv: readonly string[]): Promise<Ended> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [STEPFORGE_BIN, ...argv], {
      cwd,
      env: { ...process.env, STEPFORGE_LOG_LEVEL: 'SILENT' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, EXIT_WITHIN_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, hung });
    });
  });
}

describe('Command: run (a workflow with mcp_tool steps, in its own process)', () => {
  const project = tempProject('sf-mcp-exit-');
  let http: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    http = await startHttpMcpServer();
  });
  afterAll(async () => {
    await http.close();
    project.remove();
  });

  it(
    'ends after the run succeeds with a stdio MCP server, and the server process ends with it',
    async () => {
      const pidFile = join(project.dir, 'mcp.pid');
      // A stdio server's command comes from the project's configuration, never from the document.
      writeFileSync(
        join(project.dir, 'stepforge.config.json'),
        JSON.stringify({ mcpServers: { calc: { command: process.execPath, args: [FIXTURE, 'stdio'], env: { MCP_PID_FILE: pidFile } } } }),
      );
      writeFileSync(
        join(project.dir, 'stdio.yaml'),
        [
          'document: { dsl: "1.0", name: mcp-stdio-exit }',
          'mcp_servers:',
          '  calc: {}',
          'steps:',
          '  add: { call: mcp_tool, server: calc, tool: add, input: { a: 20, b: 22 } }',
          '  again: { call: mcp_tool, server: calc, tool: shout, input: { text: "done" } }',
          '',
        ].join('\n'),
      );
      const r = await runCli(project.dir, ['run', 'stdio.yaml', '--json']);
      expect(r.hung, `stepforge run did not exit within ${EXIT_WITHIN_MS} ms; it printed: ${r.stdout}${r.stderr}`).toBe(false);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ status: 'SUCCEEDED', output: 'DONE' });
      // The server the step started ran, and is gone with the command.
      expect(existsSync(pidFile)).toBe(true);
      const pid = Number(readFileSync(pidFile, 'utf8'));
      const deadline = Date.now() + 5_000;
      while (isProcessAlive(pid) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
      expect(isProcessAlive(pid), `the stdio MCP server (pid ${pid}) outlived the command`).toBe(false);
    },
    EXIT_WITHIN_MS + 15_000,
  );

  it(
    'ends after the run succeeds with an HTTP MCP server on loopback',
    async () => {
      writeFileSync(
        join(project.dir, 'http.yaml'),
        [
          'document: { dsl: "1.0", name: mcp-http-exit }',
          'mcp_servers:',
          `  calc: { url: "${http.url}" }`,
          'steps:',
          '  add: { call: mcp_tool, server: calc, tool: add, input: { a: 20, b: 22 } }',
          '',
        ].join('\n'),
      );
      const r = await runCli(project.dir, ['run', 'http.yaml', '--json']);
      expect(r.hung, `stepforge run did not exit within ${EXIT_WITHIN_MS} ms; it printed: ${r.stdout}${r.stderr}`).toBe(false);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ status: 'SUCCEEDED', output: { sum: 42 } });
    },
    EXIT_WITHIN_MS + 15_000,
  );
});
