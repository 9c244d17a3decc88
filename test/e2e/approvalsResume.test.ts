import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { openStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { leaveRunAtApproval } from './support/leaveRunAtApproval.js';
import { cliIn, REPO, tempProject } from './support/testIo.js';

/**
 * An approval gate across processes, on the on-disk stack: the process that started the run ends
 * while the run waits (as when `stepforge run` is interrupted), later processes resume it, and
 * `approvals approve` from a process that holds the stack alone carries it on to its end. Each
 * openStack/close here is what one CLI process does. A resumed execution dispatches the gated task
 * again with the same task token, and must find the approval it asked for, not open another.
 */
describe('Approvals: a run waiting for approval across processes', () => {
  const project = tempProject();
  const env = { STEPFORGE_LOG_LEVEL: 'SILENT' };
  let runId: string;
  let approvalId: string;
  beforeAll(() => {
    cpSync(join(REPO, 'examples'), join(project.dir, 'examples'), { recursive: true });
  });
  afterAll(() => project.remove());

  const cli = cliIn(project.dir);
  const approvalsOf = async (id: string) => {
    const all = [];
    for (const status of ['PENDING', 'APPROVED', 'REJECTED', 'TIMED_OUT']) {
      all.push(
        ...(JSON.parse((await cli('approvals', 'list', '--status', status, '--json')).out).approvals as {
          approvalId: string;
          runId: string;
          status: string;
        }[]),
      );
    }
    return all.filter((a) => a.runId === id).map((a) => [a.approvalId, a.status]);
  };

  it('leaves the run waiting on one approval when the starting process ends', async () => {
    ({ runId, approvalId } = await leaveRunAtApproval(project.dir, '3.1.0'));
    expect(approvalId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Reading commands resume nothing, so nothing is dispatched again for them.
    const shown = await cli('runs', 'show', runId, '--json');
    expect(JSON.parse(shown.out).run).toMatchObject({ runId, status: 'RUNNING' });
    expect(await approvalsOf(runId)).toEqual([[approvalId, 'PENDING']]);
  });

  it('finds the same approval when a later process resumes the run and dispatches the gated task again', async () => {
    let toolCalls = 0;
    const stack = await openStack({
      projectDir: project.dir,
      env,
      wrapHandlers: (handlers) => ({
        ...handlers,
        ToolStepFunction: async (event: unknown, context: unknown) => {
          const r = await handlers.ToolStepFunction!(event, context);
          toolCalls++;
          return r;
        },
      }),
    });
    try {
      for (let i = 0; i < 400 && toolCalls === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(toolCalls).toBe(1);
      expect((await stack.runtime.runs.getRun(runId))?.status).toBe('RUNNING');
    } finally {
      await stack.close();
    }
    expect(await approvalsOf(runId)).toEqual([[approvalId, 'PENDING']]);
  });

  it('approves from a process that holds the stack alone, which carries the run on to its end', async () => {
    const approved = await cli('approvals', 'approve', approvalId, '--comment', 'ship it');
    expect(approved.code).toBe(0);
    expect(approved.out).toContain(`approved ${approvalId} (run ${runId}, step publish)\n`);
    expect(approved.out).toContain(`run ${runId} (approval-gate) continues\n`);
    expect(approved.out).toMatch(new RegExp(`\\nSUCCEEDED  run ${runId} `));
    expect(approved.out).toContain('"stdout": "announcing release 3.1.0\\n"');
    const shown = (JSON.parse((await cli('runs', 'show', runId, '--json')).out) as { run: { status: string; output: unknown } }).run;
    expect(shown).toMatchObject({
      status: 'SUCCEEDED',
      output: { version: '3.1.0', announced: { exitCode: 0, stdout: 'announcing release 3.1.0\n', stderr: '' } },
    });
    expect(await approvalsOf(runId)).toEqual([[approvalId, 'APPROVED']]);
  });
});
