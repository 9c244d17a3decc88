import { describe, it, expect, afterAll, beforeAll } from 'vitest';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, spawnStepforge, tempProject } from './support/testIo.js';

const built = existsSync(join(REPO, 'packages', 'cli', 'dist', 'main.js'));
const WORKFLOW =
  'chain: "plan@web-search > write"\ntasks:\n  plan:\n    kind: model\n    prompt: "plan"\n  write:\n    kind: model\n    prompt: "write ${steps.plan.output}"\n';

interface ListedRun {
  runId: string;
  status: string;
  idempotencyKey?: string;
  error?: { name: string; message: string } | null;
}

/**
 * A `stepforge run` killed (SIGKILL) between writing its run record and starting the execution
 * (STEPFORGE_TEST_CRASH_AT=after-run-record) leaves an orphaned start. Whoever finds it completes
 * or fails it: the next start with the same key runs it; list, show, cancel and retry fail it
 * (nothing of it ran) instead of leaving it RUNNING for good.
 */
describe.skipIf(!built)('Class: RunService', () => {
  describe('Method: start, interrupted between the run record and the execution (spawned, built dist/)', () => {
    const project = tempProject();
    const env = { ...process.env, STEPFORGE_LOG_LEVEL: undefined };
    const stepforge = (...argv: string[]) => spawnStepforge(project.dir, env, argv);
    const crashed = (key: string, at = 'after-run-record') =>
      spawnStepforge(project.dir, { ...env, STEPFORGE_TEST_CRASH_AT: at }, ['run', 'wf.chain.yaml', '--idempotency-key', key, '--json']);
    const list = async () => (JSON.parse((await stepforge('runs', 'list', '--json')).stdout) as { runs: ListedRun[] }).runs;
    beforeAll(() => writeFileSync(join(project.dir, 'wf.chain.yaml'), WORKFLOW));
    afterAll(() => project.remove());

    it('is completed by the next start with the same key: the same run runs to its end', async () => {
      const killed = await crashed('k-again');
      // Killed: no exit code, nothing printed on stdout.
      expect([killed.code, killed.stdout]).toEqual([-1, '']);
      const again = await stepforge('run', 'wf.chain.yaml', '--idempotency-key', 'k-again', '--json');
      expect(again.code, again.stderr).toBe(0);
      const result = JSON.parse(again.stdout) as { runId: string; status: string };
      expect(result.status).toBe('SUCCEEDED');
      const runs = (await list()).filter((r) => r.idempotencyKey === 'k-again');
      expect(runs.map((r) => [r.runId, r.status])).toEqual([[result.runId, 'SUCCEEDED']]);
    }, 120_000);

    it('is failed (nothing ran) by runs list, and its key then starts it anew', async () => {
      await crashed('k-list');
      const [found] = (await list()).filter((r) => r.idempotencyKey === 'k-list');
      expect(found).toMatchObject({ status: 'FAILED' });
      const shown = await stepforge('runs', 'show', found!.runId, '--json');
      expect(shown.code, shown.stderr).toBe(0);
      const { run } = JSON.parse(shown.stdout) as { run: ListedRun };
      expect(run.error?.name).toBe('RunNotStarted');
      expect(run.error?.message).toMatch(
        /^the process that started it \(\d+@.+\) ended after recording the run and before starting its execution, so nothing of it ran/,
      );
      const again = await stepforge('run', 'wf.chain.yaml', '--idempotency-key', 'k-list', '--json');
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ runId: found!.runId, status: 'SUCCEEDED' });
    }, 120_000);

    it('is ended by runs cancel, not an internal error', async () => {
      // The store as the killed process left it: the run still RUNNING.
      const runId = await orphanId('k-cancel');
      const r = await stepforge('runs', 'cancel', runId, '--json');
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(JSON.parse(r.stdout)).toMatchObject({ runId, status: 'FAILED', cancelled: false, error: { name: 'RunNotStarted' } });
    }, 120_000);

    it('can be retried: runs retry forks it rather than answering run_running', async () => {
      const runId = await orphanId('k-retry');
      const r = await stepforge('runs', 'retry', runId, '--json');
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ parentRunId: runId, status: 'SUCCEEDED' });
    }, 120_000);

    it('killed earlier, between claiming its key and writing its run: the next start with the key writes that run and runs it to its end', async () => {
      const killed = await crashed('k-key', 'after-run-key');
      const m = /^stepforge: crash point after-run-key \(run ([0-9a-f-]{36})\)$/m.exec(killed.stderr);
      expect(m, killed.stderr).not.toBeNull();
      // The key names a run id, and no run has it yet.
      expect((await list()).filter((r) => r.idempotencyKey === 'k-key')).toEqual([]);
      const again = await stepforge('run', 'wf.chain.yaml', '--idempotency-key', 'k-key', '--json');
      expect([again.code, again.stdout.includes('run_not_started')], again.stdout + again.stderr).toEqual([0, false]);
      expect(JSON.parse(again.stdout)).toMatchObject({ runId: m![1], status: 'SUCCEEDED', reused: false });
      const shown = await stepforge('runs', 'show', m![1]!, '--json');
      expect(shown.code, shown.stderr).toBe(0);
      const { run } = JSON.parse(shown.stdout) as { run: ListedRun & { executionArn: string } };
      expect([run.status, run.executionArn.endsWith(`:${m![1]}`)]).toEqual(['SUCCEEDED', true]);
    }, 120_000);

    /** The run id the crashed start left under `key` (its crash point names it on stderr), without any command reading the store first. */
    async function orphanId(key: string): Promise<string> {
      const r = await crashed(key);
      const m = /^stepforge: crash point after-run-record \(run ([0-9a-f-]{36})\)$/m.exec(r.stderr);
      expect(m, r.stderr).not.toBeNull();
      return m![1]!;
    }
  });
});
