// `stepforge serve` as a user runs it, in its own process, stopped with Ctrl-C (SIGINT) while a
// run waits for an approval: one Ctrl-C stops it cleanly, and the run is not lost — after serve
// starts again the approval is still pending, can be decided, and the run completes.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, STEPFORGE_BIN, tempProject } from './support/testIo.js';

/** How long serve may take to end after one SIGINT before the test calls it hung. */
const STOP_WITHIN_MS = 30_000;

interface Serving {
  readonly child: ChildProcess;
  readonly url: string;
  stderr(): string;
  /** Resolves with the exit code and signal once the process has ended. */
  readonly ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the real `stepforge serve --port 0` in `cwd` and waits until it says where it listens. */
async function startServe(cwd: string): Promise<Serving> {
  const child = spawn(process.execPath, [STEPFORGE_BIN, 'serve', '--port', '0'], {
    cwd,
    env: { ...process.env, STEPFORGE_LOG_LEVEL: 'SILENT' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const deadline = Date.now() + 60_000;
  let m: RegExpExecArray | null = null;
  while (!(m = /Stepforge API\s+(\S+)/.exec(out))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`serve did not start: ${out}${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, url: m[1]!, stderr: () => err, ended };
}

/** Sends SIGINT and waits for the process to end (killing it, and saying so, when it does not in time). */
async function interrupt(s: Serving): Promise<{ code: number | null; signal: NodeJS.Signals | null; hung: boolean }> {
  s.child.kill('SIGINT');
  let timer: NodeJS.Timeout | undefined;
  const hung = await Promise.race([
    s.ended.then(() => false),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(true), STOP_WITHIN_MS))),
  ]);
  clearTimeout(timer);
  if (hung) s.child.kill('SIGKILL');
  return { ...(await s.ended), hung };
}

/** The project whose serve the API calls go to: its stack.json holds the token of the serve running now. */
let projectDir = '';

async function api(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const { apiToken } = JSON.parse(readFileSync(join(projectDir, '.stepforge', 'stack.json'), 'utf8')) as { apiToken: string };
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiToken}` },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: r.status, json: await r.json() };
}

async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('Command: serve (its own process, stopped with Ctrl-C)', () => {
  const project = tempProject('sf-serve-sigint-');
  projectDir = project.dir;
  const running: Serving[] = [];
  afterAll(() => {
    for (const s of running) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    project.remove();
  });

  it(
    'stops on the first SIGINT while a run waits for an approval, and the run completes once serve is back and the approval is decided',
    async () => {
      mkdirSync(join(project.dir, 'workflows'));
      copyFileSync(join(REPO, 'examples', 'approval-gate.chain.yaml'), join(project.dir, 'workflows', 'approval-gate.chain.yaml'));
      copyFileSync(join(REPO, 'examples', 'policy.json'), join(project.dir, 'workflows', 'policy.json'));

      const first = await startServe(project.dir);
      running.push(first);
      const started = await api(first.url, 'POST', '/workflows/approval-gate/runs', { input: { version: '9.1.0' } });
      expect(started.status).toBe(202);
      const runId = started.json.runId as string;
      const pending = await until('the approval', async () =>
        ((await api(first.url, 'GET', '/approvals')).json.approvals as { runId: string; approvalId: string; status: string }[]).find(
          (a) => a.runId === runId,
        ),
      );
      expect(pending.status).toBe('PENDING');

      const stopped = await interrupt(first);
      expect(stopped.hung, `serve was still running ${STOP_WITHIN_MS} ms after one SIGINT; stderr: ${first.stderr()}`).toBe(false);
      expect(stopped).toMatchObject({ code: 0, signal: null });
      expect(first.stderr()).toContain(
        'stopping: runs in progress stay resumable and go on when serve starts again (Ctrl-C again to force)',
      );

      // Back again: the run is still running, its approval still pending; deciding it finishes the run.
      const second = await startServe(project.dir);
      running.push(second);
      expect((await api(second.url, 'GET', `/runs/${runId}`)).json.run.status).toBe('RUNNING');
      const again = await until('the approval after the restart', async () =>
        ((await api(second.url, 'GET', '/approvals')).json.approvals as { runId: string; approvalId: string; status: string }[]).find(
          (a) => a.runId === runId,
        ),
      );
      expect(again).toMatchObject({ approvalId: pending.approvalId, status: 'PENDING' });
      const decided = await api(second.url, 'POST', `/approvals/${again.approvalId}`, {
        decision: 'approve',
        comment: 'after the restart',
      });
      expect(decided.status).toBe(200);
      const done = await until('the run to end', async () => {
        const r = (await api(second.url, 'GET', `/runs/${runId}`)).json.run as { status: string };
        return r.status === 'RUNNING' ? undefined : r;
      });
      expect(done.status).toBe('SUCCEEDED');

      const end = await interrupt(second);
      expect(end.hung, `serve was still running ${STOP_WITHIN_MS} ms after one SIGINT; stderr: ${second.stderr()}`).toBe(false);
      expect(end).toMatchObject({ code: 0, signal: null });
    },
    4 * STOP_WITHIN_MS + 120_000,
  );

  it(
    'stops on the first SIGINT while a `run` it runs for a thin client waits for an approval; the client says stack_closed and the run stays resumable',
    async () => {
      // The same workflow as above (this test also runs alone).
      mkdirSync(join(project.dir, 'workflows'), { recursive: true });
      copyFileSync(join(REPO, 'examples', 'approval-gate.chain.yaml'), join(project.dir, 'workflows', 'approval-gate.chain.yaml'));
      copyFileSync(join(REPO, 'examples', 'policy.json'), join(project.dir, 'workflows', 'policy.json'));
      const serving = await startServe(project.dir);
      running.push(serving);
      const client = spawn(
        process.execPath,
        [STEPFORGE_BIN, 'run', 'workflows/approval-gate.chain.yaml', '--input', '{"version":"9.2.0"}', '--json'],
        {
          cwd: project.dir,
          env: { ...process.env, STEPFORGE_LOG_LEVEL: 'SILENT', STEPFORGE_DEBUG_LOADER: '1' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      let err = '';
      client.stdout.on('data', (d: Buffer) => (out += d.toString()));
      client.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const clientEnded = new Promise<number | null>((resolve) => client.on('exit', (code) => resolve(code)));
      const pending = await until("the approval of the thin client's run", async () =>
        ((await api(serving.url, 'GET', '/approvals')).json.approvals as { runId: string; status: string }[]).find(
          (a) => a.status === 'PENDING',
        ),
      );

      const stopped = await interrupt(serving);
      expect(stopped.hung, `serve was still running ${STOP_WITHIN_MS} ms after one SIGINT; stderr: ${serving.stderr()}`).toBe(false);
      expect(stopped).toMatchObject({ code: 0, signal: null });
      expect(await clientEnded).toBe(1);
      expect(err).toContain("stepforge ran the command on the project's serve (thin client)");
      expect(JSON.parse(out.trim().split('\n').pop()!)).toMatchObject({ error: { class: 'stack_closed' } });

      // The run it started is still there, running, its approval pending.
      const again = await startServe(project.dir);
      running.push(again);
      expect((await api(again.url, 'GET', `/runs/${pending.runId}`)).json.run.status).toBe('RUNNING');
      const end = await interrupt(again);
      expect(end).toMatchObject({ code: 0, signal: null, hung: false });
    },
    4 * STOP_WITHIN_MS + 120_000,
  );
});
