// A Contenox HITL policy (hitl-policy-v1) as the project's approval policy, end to end through the
// real CLI: a gated shell call waits for a human; approved it runs, rejected it fails the run with
// ApprovalRejected, and unanswered past its rule's timeout_s (or the runtime's approval timeout) it
// is denied by the process running the run — the run then goes on by its on_failure, or fails.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnStepforge, tempProject } from './support/testIo.js';

const chain = (onFailure?: string) =>
  JSON.stringify({
    id: 'gated',
    tasks: [
      {
        id: 'list',
        handler: 'tools',
        tools: { name: 'local_shell', args: { command: 'ls sub' } },
        transition: { ...(onFailure ? { on_failure: onFailure } : {}), branches: [{ operator: 'default', goto: 'end' }] },
      },
      { id: 'denied', handler: 'noop' },
    ],
  });

const policy = (timeoutS?: number) =>
  JSON.stringify({
    $schema: 'https://contenox.com/schema/hitl-policy-v1.schema.json',
    default_action: 'allow',
    rules: [
      {
        tools: 'local_shell',
        tool: 'local_shell',
        action: 'approve',
        ...(timeoutS !== undefined ? { timeout_s: timeoutS, on_timeout: 'deny' } : {}),
      },
    ],
  });

describe('Contenox HITL policy: approve, deny and timeout (embedded, real CLI)', () => {
  const projects: { remove(): void }[] = [];
  afterAll(() => projects.forEach((p) => p.remove()));

  function project(timeoutS?: number, onFailure?: string) {
    const p = tempProject('sf-cxhitl-');
    projects.push(p);
    mkdirSync(join(p.dir, 'sub'));
    writeFileSync(join(p.dir, 'sub', 'file.txt'), 'x');
    writeFileSync(join(p.dir, 'policy.json'), policy(timeoutS));
    writeFileSync(join(p.dir, 'gated.json'), chain(onFailure));
    return p.dir;
  }
  const env = (extra: Record<string, string> = {}) => ({ ...process.env, STEPFORGE_LOG_LEVEL: 'SILENT', ...extra });

  type Approval = { approvalId: string; tool: string; status: string; expiresAt: string; createdAt: string };
  const listed = async (dir: string, status = 'PENDING'): Promise<Approval[]> =>
    (
      JSON.parse((await spawnStepforge(dir, env(), ['approvals', 'list', '--status', status, '--json'])).stdout || '{}') as {
        approvals?: Approval[];
      }
    ).approvals ?? [];
  async function pending(dir: string): Promise<Approval> {
    for (let i = 0; i < 600; i++) {
      const list = await listed(dir);
      if (list.length > 0) return list[0]!;
      await new Promise((res) => setTimeout(res, 100));
    }
    throw new Error('no approval appeared');
  }
  const runError = async (dir: string, runId: string) =>
    (
      JSON.parse((await spawnStepforge(dir, env(), ['runs', 'show', runId, '--json'])).stdout) as {
        run: { error?: { name: string; message: string } };
      }
    ).run.error;

  it('runs the gated call once approved', async () => {
    const dir = project();
    const running = spawnStepforge(dir, env(), ['run', 'gated.json', '--input', '{}', '--json']);
    const a = await pending(dir);
    expect(a).toMatchObject({ tool: 'shell', status: 'PENDING' });
    expect((await spawnStepforge(dir, env(), ['approvals', 'approve', a.approvalId])).code).toBe(0);
    const r = await running;
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'SUCCEEDED', output: { exitCode: 0, stdout: 'file.txt\n' } });
  }, 200_000);

  it('fails the run with ApprovalRejected when rejected', async () => {
    const dir = project();
    const running = spawnStepforge(dir, env(), ['run', 'gated.json', '--input', '{}', '--json']);
    const a = await pending(dir);
    expect((await spawnStepforge(dir, env(), ['approvals', 'reject', a.approvalId])).code).toBe(0);
    const r = await running;
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { runId: string; status: string };
    expect(out.status).toBe('FAILED');
    expect(await runError(dir, out.runId)).toMatchObject({ name: 'ApprovalRejected' });
  }, 200_000);

  it("denies an ask left unanswered past its rule's timeout_s, and the chain goes on by its on_failure", async () => {
    const dir = project(2, 'denied');
    const r = await spawnStepforge(dir, env(), ['run', 'gated.json', '--input', '{}', '--json']);
    // Nobody answered: the process running the run denied it. Its deadline was the rule's 2 s, not the runtime's default of a day.
    const [a] = await listed(dir, 'TIMED_OUT');
    expect(Date.parse(a!.expiresAt) - Date.parse(a!.createdAt)).toBe(2000);
    expect(r.code, r.stderr).toBe(0);
    // on_failure's task gets the error as its input; noop passes it on.
    const out = JSON.parse(r.stdout) as { status: string; output: { Error: string; Cause: string } };
    expect(out.status).toBe('SUCCEEDED');
    expect(out.output).toMatchObject({ Error: 'ApprovalRejected', Cause: `approval ${a!.approvalId} timed out (a timeout is a denial)` });
  }, 200_000);

  it('denies an ask past STEPFORGE_APPROVAL_TIMEOUT_SECONDS, failing a run without on_failure by name', async () => {
    const dir = project();
    const r = await spawnStepforge(dir, env({ STEPFORGE_APPROVAL_TIMEOUT_SECONDS: '3' }), ['run', 'gated.json', '--input', '{}', '--json']);
    const [a] = await listed(dir, 'TIMED_OUT');
    expect(Date.parse(a!.expiresAt) - Date.parse(a!.createdAt)).toBe(3000);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { runId: string; status: string };
    expect(out.status).toBe('FAILED');
    expect(await runError(dir, out.runId)).toMatchObject({
      name: 'ApprovalRejected',
      message: `step 'list' failed: approval ${a!.approvalId} timed out (a timeout is a denial)`,
    });
  }, 200_000);
});
