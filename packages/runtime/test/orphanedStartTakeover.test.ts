// A start that takes over an orphaned start (a run recorded by a process that ended before starting
// its execution) and then loses its StartExecution with the stack (the stack's owner ended under it)
// must be able to start again: its retry finds the run signed by its own process, which is not
// starting it any more, and completes it, rather than waiting for itself until run_not_started.
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { RunService } from '../src/runs/RunService.js';
import type { Executions } from '../src/runs/ports.js';
import { WF_ENTRY as ENTRY, fileRuntime, wfCatalog as catalog } from './runServiceFixture.js';

/** Executions that lose the next `lose` starts as a connection the stack's owner closed (unknown outcome). */
function executions(lose: number): Executions & { started: string[] } {
  const started: string[] = [];
  const running = new Set<string>();
  return {
    started,
    async start(req) {
      if (lose-- > 0) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET', $metadata: {} });
      started.push(req.name);
      running.add(`${ENTRY.stateMachineArn.replace(':stateMachine:', ':execution:')}:${req.name}`);
    },
    async describe(arn) {
      return running.has(arn) ? ({ status: 'RUNNING', executionArn: arn, $metadata: {} } as never) : undefined;
    },
    async stop() {},
    async history() {
      return [];
    },
  };
}

const runtime = fileRuntime();

describe('Class: RunService (an orphaned start taken over, then lost with the stack)', () => {
  it('completes the run on the next start with the key, instead of waiting for its own process', async () => {
    const rt = runtime();
    // Recorded by a process that has ended (no such pid), before it started the execution.
    const orphan = await rt.runs.startRun({
      workflow: 'wf',
      runId: 'r-orphan',
      executionArn: `${ENTRY.stateMachineArn.replace(':stateMachine:', ':execution:')}:r-orphan`,
      startedBy: `4194303@${hostname()}`,
      idempotencyKey: 'k1',
      input: { n: 1 },
    });
    expect(orphan.reused).toBe(false);
    const ex = executions(1);
    const service = new RunService({ runtime: rt, executions: ex, catalog });
    await expect(service.start(ENTRY, { n: 1 }, { idempotencyKey: 'k1', runId: 'r-first' })).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(ex.started).toEqual([]);
    const again = await service.start(ENTRY, { n: 1 }, { idempotencyKey: 'k1', runId: 'r-second' });
    expect([again.run.runId, again.reused, ex.started]).toEqual(['r-orphan', false, ['r-orphan']]);
    // Found again, its execution running: the key answers the run, as any start that finds it.
    const third = await service.start(ENTRY, { n: 1 }, { idempotencyKey: 'k1', runId: 'r-third' });
    expect([third.run.runId, third.reused, ex.started]).toEqual(['r-orphan', true, ['r-orphan']]);
  });
});
