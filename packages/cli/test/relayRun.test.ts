import { describe, it, expect, afterEach } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const RELAY = fileURLToPath(new URL('../bin/relayRun.js', import.meta.url));

/**
 * The thin client alone (bin/relayRun.js), against a stand-in serve on loopback: what it sends,
 * how it writes the frames back, when it gives way (resolving undefined, writing nothing), and
 * what it says when serve goes away mid-command.
 */
describe('relayRun: the thin client of run', () => {
  const dirs: string[] = [];
  const servers: Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** A project whose stack.json names a live process (this test's parent) and a stand-in serve answering with `answer`. */
  async function projectWith(answer: (req: IncomingMessage, body: string, res: ServerResponse) => void, token = 'tok') {
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => answer(req, body, res));
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const dir = mkdtempSync(join(tmpdir(), 'sf-relay-unit-'));
    dirs.push(dir);
    mkdirSync(join(dir, '.stepforge'));
    const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    writeFileSync(join(dir, '.stepforge', 'stack.json'), JSON.stringify({ pid: process.pid, apiUrl, apiToken: token }));
    return dir;
  }

  /** Runs relayRun(argv) in a process of its own in `cwd`: exit 99 when it gave way. */
  function relay(cwd: string, argv: string[], env: Record<string, string> = {}) {
    const script = `require(${JSON.stringify(RELAY)}).relayRun(${JSON.stringify(argv)}).then((c) => { process.exitCode = c === undefined ? 99 : c; })`;
    return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['-e', script], { cwd, env: { ...process.env, ...env } }, (e, stdout, stderr) =>
        resolve({ code: e ? Number((e as { code?: number }).code) : 0, stdout, stderr }),
      );
    });
  }

  it('sends the command line, directory, environment and terminal with the token, and writes the frames in order', async () => {
    let seen: { auth?: string; body?: Record<string, unknown> } = {};
    const dir = await projectWith((req, body, res) => {
      seen = { auth: req.headers.authorization, body: JSON.parse(body) as Record<string, unknown> };
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"out":"one\\n"}\n{"err":"two\\n"}\n');
      res.end('{"out":"three\\n"}\n{"exit":3}\n');
    });
    const r = await relay(dir, ['wf.yaml', '--input', '{"a":1}'], { SF_RELAY_MARK: 'yes' });
    expect(r).toEqual({ code: 3, stdout: 'one\nthree\n', stderr: 'two\n' });
    expect(seen.auth).toBe('Bearer tok');
    expect(seen.body).toMatchObject({ argv: ['wf.yaml', '--input', '{"a":1}'], isTTY: false, env: { SF_RELAY_MARK: 'yes' } });
    expect(seen.body?.stdin).toBeUndefined();
  });

  it('gives way, writing nothing, when serve refuses, when options need a stack of its own, or when told to', async () => {
    const dir = await projectWith((_req, _body, res) => {
      res.writeHead(409, { 'content-type': 'application/json' });
      res.end('{"error":{"code":"wrong_project","message":"no"}}');
    });
    for (const [argv, env] of [
      [['wf.yaml'], {}],
      [['wf.yaml', '--in-memory'], {}],
      [['wf.yaml', '--provider', 'bedrock'], {}],
      [['wf.yaml', '--help'], {}],
      [['wf.yaml'], { STEPFORGE_NO_RELAY: '1' }],
      [['wf.yaml'], { STEPFORGE_TEST_CRASH_AT: 'after-run-record' }],
    ] as const) {
      expect({ argv, ...(await relay(dir, [...argv], env)) }).toEqual({ argv, code: 99, stdout: '', stderr: '' });
    }
  });

  it('says stack_closed (exit 1) when serve goes away before the command ends, in the --json form too', async () => {
    const dir = await projectWith((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"out":"run started\\n"}\n');
      setTimeout(() => res.destroy(), 50);
    });
    const text = await relay(dir, ['wf.yaml']);
    expect(text.code).toBe(1);
    expect(text.stdout).toBe('run started\n');
    expect(text.stderr).toMatch(/^error\[stack_closed\] the stepforge serve \(pid \d+\) running this command stopped before it ended; /);
    const json = await relay(dir, ['wf.yaml', '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout.split('\n')[1]!)).toMatchObject({ error: { class: 'stack_closed', line: null, column: null } });
  });
});
