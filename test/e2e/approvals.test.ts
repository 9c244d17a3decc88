import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../../packages/embedded/src/RunService.js';
import type { WorkflowEntry } from '../../packages/embedded/src/RegisteredCatalog.js';
import { cliIn, REPO, tempProject } from './support/testIo.js';

/**
 * The approval gate end to end: the shell call in examples/approval-gate.chain.yaml matches the
 * `approve` rule of examples/policy.json, so the tool handler records a PENDING approval and the
 * state waits on its task token; `approvals approve` runs the call and resumes the run, `approvals
 * reject` fails the step with ApprovalRejected.
 *
 * Tool steps are compiled to `lambda:invoke.waitForTaskToken`, so the gated call simply waits on
 * its token; the test checks that shape and then runs the compiled state machine unchanged.
 */
describe('Approvals: the approval gate end to end', () => {
  const project = tempProject();
  let stack: EmbeddedStack;
  let service: EmbeddedRunService;
  let entry: WorkflowEntry;
  beforeAll(async () => {
    // The repository's layout: the policy is workflows/policy.json's rules, then examples/policy.json's,
    // so a rule of the first that matched the gated call would decide it before the example's.
    for (const dir of ['examples', 'workflows']) cpSync(join(REPO, dir), join(project.dir, dir), { recursive: true });
    stack = await openStack({ projectDir: project.dir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
    service = new EmbeddedRunService(stack, project.dir);
    const { entry: e, compiled } = await service.catalog.registerFile('examples/approval-gate.chain.yaml');
    entry = e;
    const publish = (compiled.asl as { States: Record<string, Record<string, any>> }).States.publish!;
    expect(publish.Resource).toBe('arn:aws:states:::lambda:invoke.waitForTaskToken');
    expect(publish.Arguments.Payload.taskToken).toBe('{% $states.context.Task.Token %}');
  });
  afterAll(async () => {
    await stack.close();
    project.remove();
  });

  const cli = cliIn(project.dir);
  const pendingFor = async (runId: string) => {
    for (let i = 0; i < 400; i++) {
      const list = JSON.parse((await cli('approvals', 'list', '--json')).out).approvals as {
        approvalId: string;
        runId: string;
        tool: string;
        args: unknown;
        status: string;
      }[];
      const mine = list.filter((a) => a.runId === runId);
      if (mine.length > 0) return mine;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('no approval appeared');
  };

  it('pauses on the gated call and resumes when approved', async () => {
    const { run } = await service.start(entry, { version: '1.2.0' });
    const [approval] = await pendingFor(run.runId);
    expect(approval).toMatchObject({ tool: 'shell', args: { command: 'echo announcing release 1.2.0' }, status: 'PENDING' });
    expect((await stack.runtime.runs.getRun(run.runId))?.status).toBe('RUNNING');

    const approved = await cli('approvals', 'approve', approval!.approvalId, '--comment', 'ship it');
    expect(approved.code).toBe(0);
    expect(approved.out).toBe(`approved ${approval!.approvalId} (run ${run.runId}, step publish)\n`);
    const done = await service.wait(run.runId);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.output).toEqual({ version: '1.2.0', announced: { exitCode: 0, stdout: 'announcing release 1.2.0\n', stderr: '' } });
    const decided = await stack.runtime.approvals.get(approval!.approvalId);
    expect(decided).toMatchObject({ status: 'APPROVED', decidedBy: 'cli', reason: 'ship it' });
    const listed = JSON.parse((await cli('approvals', 'list', '--status', 'approved', '--json')).out).approvals as { approvalId: string }[];
    expect(listed.find((a) => a.approvalId === approval!.approvalId)).toMatchObject({
      status: 'APPROVED',
      decidedAt: decided!.decidedAt,
      decidedBy: 'cli',
      reason: 'ship it',
    });
    expect((await cli('approvals', 'list', '--status', 'approved')).out).toContain(
      `${approval!.approvalId}  run ${run.runId}  step publish  shell {"command":"echo announcing release 1.2.0"}  (APPROVED by cli at ${decided!.decidedAt}: ship it)\n`,
    );
    expect(JSON.parse((await cli('approvals', 'list', '--json')).out).approvals).toEqual([]);

    // A second decision is refused by name.
    const again = await cli('approvals', 'reject', approval!.approvalId, '--json');
    expect(again.code).toBe(1);
    expect(JSON.parse(again.out).error).toMatchObject({
      class: 'approval_decided',
      message: `approval '${approval!.approvalId}' was already decided: APPROVED`,
    });
  });

  it('forks an approved run without asking again: the call approved and made is reused, not made or approved twice', async () => {
    const { run } = await service.start(entry, { version: '3.0.0' });
    const [approval] = await pendingFor(run.runId);
    expect((await cli('approvals', 'approve', approval!.approvalId)).code).toBe(0);
    expect((await service.wait(run.runId)).status).toBe('SUCCEEDED');
    const approvalsBefore = (await stack.runtime.approvals.list('APPROVED')).length;

    const fork = await service.restart(run.runId, 'receipt');
    expect(fork.rerun).toEqual(['receipt']);
    const done = await service.wait(fork.run.runId);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.output).toEqual({ version: '3.0.0', announced: { exitCode: 0, stdout: 'announcing release 3.0.0\n', stderr: '' } });
    const details = await service.details(fork.run.runId);
    expect(details.steps.map((s) => [s.id, s.state, s.reused])).toEqual([
      ['notes', 'succeeded', true],
      ['publish', 'succeeded', true],
      ['receipt', 'succeeded', false],
    ]);
    // No approval was asked for (none pending, none decided), and no ApprovalRequested event.
    expect((await stack.runtime.approvals.list('PENDING')).filter((a) => a.runId === fork.run.runId)).toEqual([]);
    expect(await stack.runtime.approvals.list('APPROVED')).toHaveLength(approvalsBefore);
    expect(details.events.map((e) => e.type)).not.toContain('ApprovalRequested');
  });

  it('fails the step with ApprovalRejected when rejected', async () => {
    const { run } = await service.start(entry, { version: '2.0.0' });
    const [approval] = await pendingFor(run.runId);
    const rejected = await cli('approvals', 'reject', approval!.approvalId, '--comment', 'not today');
    expect(rejected.code).toBe(0);
    const done = await service.wait(run.runId);
    expect(done.status).toBe('FAILED');
    expect(done.error?.name).toBe('ApprovalRejected');
    expect(done.error?.message).toContain('not today');
    const details = await service.details(run.runId);
    expect(details.steps.map((s) => [s.id, s.state])).toEqual([
      ['notes', 'succeeded'],
      ['publish', 'failed'],
      ['receipt', 'skipped'],
    ]);
  });

  it('refuses to decide for a run that has ended, and no longer lists its approval', async () => {
    const { run } = await service.start(entry, { version: '4.0.0' });
    const [approval] = await pendingFor(run.runId);
    await service.cancel(run.runId);
    const listed = JSON.parse((await cli('approvals', 'list', '--json')).out).approvals as { runId: string }[];
    expect(listed.filter((a) => a.runId === run.runId)).toEqual([]);
    const r = await cli('approvals', 'approve', approval!.approvalId, '--json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).error).toMatchObject({
      class: 'run_ended',
      message: `run '${run.runId}' has ended (ABORTED), so nothing waits for approval '${approval!.approvalId}'; the call was not made`,
    });
    expect((await stack.runtime.approvals.get(approval!.approvalId))?.status).toBe('PENDING');
    expect((await stack.runtime.runs.listSteps(run.runId)).map((s) => [s.stepId, s.status])).toEqual([['notes:reason#turn0', 'SUCCEEDED']]);
  });

  it('refuses to fork a run that is still running (run_running), and starts nothing', async () => {
    const { run } = await service.start(entry, { version: '5.0.0' });
    const [approval] = await pendingFor(run.runId);
    const before = (await stack.runtime.runs.listRuns()).length;
    for (const [fork, argv] of [
      ['retry', ['runs', 'retry', run.runId]],
      ['restart', ['runs', 'restart', run.runId, '--from', 'publish']],
    ] as const) {
      const r = await cli(...argv, '--json');
      expect(r.code).toBe(1);
      expect(JSON.parse(r.out).error).toMatchObject({
        class: 'run_running',
        message: `run '${run.runId}' is still running; ${fork} forks a run that has ended`,
      });
    }
    expect(await stack.runtime.runs.listRuns()).toHaveLength(before);
    expect((await cli('approvals', 'reject', approval!.approvalId)).code).toBe(0);
    expect((await service.wait(run.runId)).status).toBe('FAILED');
  });

  it('cancels a run from a process connected to the stack that runs it (runs cancel)', async () => {
    const { run } = await service.start(entry, { version: '7.0.0' });
    const [approval] = await pendingFor(run.runId);
    const r = await cli('runs', 'cancel', run.runId, '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      runId: run.runId,
      status: 'ABORTED',
      cancelled: true,
      error: { name: 'Cancelled', message: 'cancelled by the user' },
    });
    // The process that runs it settles it too, and its approval waits for nobody any more.
    expect((await service.wait(run.runId)).status).toBe('ABORTED');
    expect(
      (JSON.parse((await cli('approvals', 'list', '--json')).out).approvals as { runId: string }[]).filter((a) => a.runId === run.runId),
    ).toEqual([]);
    expect((await stack.runtime.approvals.get(approval!.approvalId))?.status).toBe('PENDING');
  });

  it('lets one of several deciders at once decide, and tells the others approval_decided', async () => {
    const { run } = await service.start(entry, { version: '6.0.0' });
    const [approval] = await pendingFor(run.runId);
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => service.decideApproval(approval!.approvalId, i % 2 === 0 ? 'APPROVED' : 'REJECTED')),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected')
        expect([(r.reason as { code?: string }).code, (r.reason as Error).message]).toEqual([
          'approval_decided',
          expect.stringMatching(/^approval '.+' was already decided: (APPROVED|REJECTED)$/),
        ]);
    }
    const decided = (won[0] as PromiseFulfilledResult<{ approval: { status: string } }>).value.approval.status;
    expect((await service.wait(run.runId)).status).toBe(decided === 'APPROVED' ? 'SUCCEEDED' : 'FAILED');
  });

  it('names an unknown approval', async () => {
    const r = await cli('approvals', 'approve', 'nope', '--json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).error).toMatchObject({ class: 'unknown_approval' });
  });
});
