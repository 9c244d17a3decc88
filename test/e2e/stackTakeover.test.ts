import { describe, it, expect, afterAll, beforeAll } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, STEPFORGE_BIN as BIN, spawnStepforge, tempProject } from './support/testIo.js';

const built = existsSync(join(REPO, 'packages', 'cli', 'dist', 'main.js'));

/**
 * Two `stepforge run`s in one project, as from two terminals: the first owns the stack, the second
 * connects to it. When the first process ends (interrupted here, with the signal Ctrl-C sends),
 * the second takes the stack over, resumes from the last checkpoints, and follows its run to the
 * end; the first run waits on disk, on its one approval, for the next process.
 */
describe.skipIf(!built)('Binary: a run outlives the process that held the stack (spawned, built dist/)', () => {
  const project = tempProject();
  const env = { ...process.env, STEPFORGE_LOG_LEVEL: undefined };
  const children: ChildProcess[] = [];
  beforeAll(() => {
    cpSync(join(REPO, 'examples'), join(project.dir, 'examples'), { recursive: true });
  });
  afterAll(() => {
    for (const c of children) c.kill('SIGKILL');
    project.remove();
  });

  const stepforge = (...argv: string[]) => spawnStepforge(project.dir, env, argv);
  /** A long-running command, with its output so far and its end. */
  const start = (...argv: string[]) => {
    const child = spawn(process.execPath, [BIN, ...argv], { cwd: project.dir, env });
    children.push(child);
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (d: Buffer) => {
      out.stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out.stderr += d.toString();
    });
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, out, exit };
  };
  const pending = async (version: string) => {
    for (let i = 0; i < 200; i++) {
      const listed = await stepforge('approvals', 'list', '--json');
      const list = JSON.parse(listed.stdout || '{"approvals":[]}').approvals as
        { approvalId: string; runId: string; args: { command: string } }[] | undefined;
      if (list === undefined) throw new Error(`approvals list answered ${listed.code}: ${listed.stdout} ${listed.stderr}`);
      const mine = list.filter((a) => a.args.command === `echo announcing release ${version}`);
      if (mine.length > 0) return mine;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`no approval for ${version}`);
  };

  it('hands the stack to the connected run when the owner is interrupted', async () => {
    const first = start('run', 'examples/approval-gate.chain.yaml', '--input', '{"version":"A"}');
    const [a] = await pending('A');
    const second = start('run', 'examples/approval-gate.chain.yaml', '--input', '{"version":"B"}', '--json');
    const [b] = await pending('B');
    first.child.kill('SIGINT');
    expect(await first.exit).not.toBe(0);

    const approved = await stepforge('approvals', 'approve', b!.approvalId);
    expect(approved.code).toBe(0);
    expect(await second.exit).toBe(0);
    expect(second.out.stderr).toContain("note: the stepforge process that held this project's stack ended; this one takes it over");
    expect(JSON.parse(second.out.stdout)).toMatchObject({
      runId: b!.runId,
      status: 'SUCCEEDED',
      output: { version: 'B', announced: { stdout: 'announcing release B\n' } },
    });

    // The first run still waits on its one approval; approving it from a process that holds the
    // stack alone carries it on to its end.
    expect((await pending('A')).map((x) => x.approvalId)).toEqual([a!.approvalId]);
    const last = await stepforge('approvals', 'approve', a!.approvalId, '--json');
    expect(last.code).toBe(0);
    expect(JSON.parse(last.stdout)).toMatchObject({
      approvalId: a!.approvalId,
      status: 'APPROVED',
      runId: a!.runId,
      run: { status: 'SUCCEEDED' },
    });
    const runs = JSON.parse((await stepforge('runs', 'list', '--json')).stdout).runs as { runId: string; status: string }[];
    expect(runs.map((r) => r.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
  }, 180_000);

  it('cancels the run that the owning `run` follows: that process ends with it, and runs cancel carries on without a word', async () => {
    const owner = start('run', 'examples/approval-gate.chain.yaml', '--input', '{"version":"C"}');
    const [c] = await pending('C');
    const cancel = await stepforge('runs', 'cancel', c!.runId, '--json');
    expect(cancel.code).toBe(0);
    expect(JSON.parse(cancel.stdout)).toMatchObject({ runId: c!.runId, status: 'ABORTED', cancelled: true });
    // The owner ends (its run did) while runs cancel waits for the run to settle: that is expected,
    // so no note about taking the stack over.
    expect(cancel.stderr).toBe('');
    expect(await owner.exit).toBe(1);
    expect(owner.out.stdout).toContain(`ABORTED  run ${c!.runId}`);
  }, 120_000);
});
