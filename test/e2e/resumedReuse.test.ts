// `stepforge run --idempotency-key K` when the run K names had not finished (its process ended while
// it waited for an approval): the run goes on in this process, so its unfinished steps run now. The
// command must say so — which steps ran now and which were reused — not "nothing ran again".
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaveRunAtApproval } from './support/leaveRunAtApproval.js';
import { cliIn, REPO, tempProject } from './support/testIo.js';

describe('Command: run (an idempotency key naming a run that had not finished)', () => {
  const project = tempProject('sf-resumed-reuse-');
  beforeAll(() => {
    cpSync(join(REPO, 'examples'), join(project.dir, 'examples'), { recursive: true });
  });
  afterAll(() => project.remove());
  const cli = cliIn(project.dir);

  it('says the run goes on here, and at the end which steps ran now and which were reused', async () => {
    const { runId, approvalId } = await leaveRunAtApproval(project.dir, '9.1.0', { idempotencyKey: 'rel-9.1' });
    expect(approvalId).not.toBe('');

    const following = cli('run', 'examples/approval-gate.chain.yaml', '--input', '{"version":"9.1.0"}', '--idempotency-key', 'rel-9.1');
    // The run goes on in that command's process (this one): its gated step asks again, and is approved.
    let pending = false;
    for (let i = 0; i < 400 && !pending; i++) {
      // While the run command is still opening the store, a list may find it held (store_in_use): look again.
      const listed = await cli('approvals', 'list', '--json');
      pending = ((JSON.parse(listed.out) as { approvals?: { approvalId: string }[] }).approvals ?? []).some(
        (a) => a.approvalId === approvalId,
      );
      if (!pending) await new Promise((r) => setTimeout(r, 25));
    }
    expect(pending).toBe(true);
    // As the list above, an approve made while the stack changes hands may be refused for the
    // moment (under load): ask again, a bounded number of times, and show the last answer.
    let approved = await cli('approvals', 'approve', approvalId);
    for (let i = 0; i < 40 && approved.code !== 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      approved = await cli('approvals', 'approve', approvalId);
    }
    expect(approved.code, approved.err + approved.out).toBe(0);
    const r = await following;

    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(
      `run ${runId} (approval-gate) reused: idempotency key 'rel-9.1' names this run, which had not finished; it goes on here (1 step finished before, kept)\n`,
    );
    expect(r.out).not.toContain('nothing ran again');
    expect(r.out).toMatch(new RegExp(`\\nSUCCEEDED  run ${runId} `));
    expect(r.out).toContain('\nran now: publish, receipt; reused from before: notes\n');

    // Once it has ended, the same key shows the stored result, and then nothing runs again.
    const replay = await cli('run', 'examples/approval-gate.chain.yaml', '--input', '{"version":"9.1.0"}', '--idempotency-key', 'rel-9.1');
    expect(replay.code).toBe(0);
    expect(replay.out).toContain(
      `run ${runId} (approval-gate) reused: idempotency key 'rel-9.1' already ran; showing its stored result, nothing ran again\n`,
    );
    expect(replay.out).not.toContain('ran now:');
  }, 120_000);
});
