import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { openStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../../packages/embedded/src/RunService.js';
import { leaveRunAtApproval } from './support/leaveRunAtApproval.js';
import { cliIn, REPO, tempProject } from './support/testIo.js';

/**
 * `stepforge runs cancel ID` on the on-disk stack, the case a user without `serve` meets: the
 * process that started a run ended while the run waited for approval, and no process holds the
 * stack. The cancelling process comes to hold it without resuming anything, so the run ends where
 * it stands (the engine ends its dormant execution ABORTED): the gated task is not dispatched
 * again, no approval is added, and a later process has nothing to resume.
 */
describe('runs cancel: a run left waiting by a process that ended', () => {
  const project = tempProject();
  const env = { STEPFORGE_LOG_LEVEL: 'SILENT' };
  let runId: string;
  let approvalId = '';
  beforeAll(async () => {
    cpSync(join(REPO, 'examples'), join(project.dir, 'examples'), { recursive: true });
    ({ runId, approvalId } = await leaveRunAtApproval(project.dir, '6.0.0'));
  });
  afterAll(() => project.remove());

  const cli = cliIn(project.dir);

  it('ends the run ABORTED with the reason given, dispatching nothing again', async () => {
    expect(approvalId).not.toBe('');
    const r = await cli('runs', 'cancel', runId, '--reason', 'wrong version');
    expect(r).toMatchObject({ code: 0, out: `cancelled run ${runId} (approval-gate): ABORTED\n`, err: '' });
    const shown = JSON.parse((await cli('runs', 'show', runId, '--json')).out) as {
      run: { status: string; error: unknown; endedAt?: string; executionArn: string };
    };
    expect(shown.run).toMatchObject({ status: 'ABORTED', error: { name: 'Cancelled', message: 'wrong version' } });
    expect(shown.run.endedAt).toEqual(expect.any(String));
    const text = (await cli('runs', 'show', runId)).out;
    expect(text).toContain('\nerror: Cancelled: wrong version\n');
    // A process that holds the stack later has nothing of this run to resume.
    let toolCalls = 0;
    const stack = await openStack({
      projectDir: project.dir,
      env,
      wrapHandlers: (handlers) => ({
        ...handlers,
        ToolStepFunction: async (e: unknown, c: unknown) => {
          toolCalls++;
          return handlers.ToolStepFunction!(e, c);
        },
      }),
    });
    try {
      await new Promise((r) => setTimeout(r, 200));
      expect(toolCalls).toBe(0);
      const approvals = (await stack.runtime.approvals.list('PENDING')).filter((a) => a.runId === runId);
      expect(approvals.map((a) => a.approvalId)).toEqual([approvalId]);
      expect((await stack.runtime.runs.getRun(runId))?.status).toBe('ABORTED');
      const history = await new EmbeddedRunService(stack, project.dir).history(shown.run.executionArn);
      expect(history.at(-1)).toMatchObject({
        type: 'ExecutionAborted',
        executionAbortedEventDetails: { error: 'Cancelled', cause: 'wrong version' },
      });
    } finally {
      await stack.close();
    }
    // Its approval is no longer offered, and deciding it is refused by name.
    expect(
      (JSON.parse((await cli('approvals', 'list', '--json')).out).approvals as { runId: string }[]).filter((a) => a.runId === runId),
    ).toEqual([]);
    const approve = await cli('approvals', 'approve', approvalId, '--json');
    expect(approve.code).toBe(1);
    expect(JSON.parse(approve.out).error).toMatchObject({ class: 'run_ended' });
  });

  it('leaves a run that has ended as it is, and says so', async () => {
    const r = await cli('runs', 'cancel', runId, '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      runId,
      status: 'ABORTED',
      cancelled: false,
      error: { name: 'Cancelled', message: 'wrong version' },
    });
    const plain = await cli('runs', 'cancel', runId);
    expect(plain.out).toBe(`run ${runId} (approval-gate) had already ended: ABORTED; nothing to cancel\n`);
  });

  it('names an unknown run, and refuses a cancel without a run id or a reason elsewhere', async () => {
    const unknown = await cli('runs', 'cancel', 'nope', '--json');
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.out).error).toMatchObject({ class: 'unknown_run', message: "no run with id 'nope'" });
    const none = await cli('runs', 'cancel');
    expect(none.code).toBe(2);
    expect(none.err).toContain('error[usage] runs cancel takes one run ID');
    const empty = await cli('runs', 'cancel', runId, '--reason', ' ');
    expect(empty).toEqual({
      code: 2,
      out: '',
      err: "error[usage] --reason cannot be empty: say why the run is cancelled, or leave --reason out to record 'cancelled by the user'\n",
    });
    const misplaced = await cli('runs', 'show', runId, '--reason', 'x');
    expect(misplaced.code).toBe(2);
    expect(misplaced.err).toContain('error[usage] --reason goes with runs cancel');
  });
});
