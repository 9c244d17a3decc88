// A start killed between its two writes (the idempotency key claimed, the run record not yet
// written) leaves a key that names a run id with no run. The next start with the key writes that
// run, under the key's run id, and starts its execution named after it: the record must name that
// same execution, or every wait for the run looks for an execution that never starts and ends in
// run_not_started, the run left RUNNING for good.
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { RunStore } from '../src/persistence/RunStore.js';
import { RunService } from '../src/runs/RunService.js';
import { runDetailsJson } from '../src/runs/runJson.js';
import type { Executions } from '../src/runs/ports.js';
import { WF_ENTRY as ENTRY, fileRuntime, wfCatalog as catalog } from './runServiceFixture.js';

const EXECUTION_PREFIX = 'arn:aws:states:us-east-1:123456789012:execution:wf';

/** Executions whose every start succeeds at once (by ARN, as the engine names them). */
function executions(): Executions & { started: string[] } {
  const started: string[] = [];
  return {
    started,
    async start(req) {
      started.push(`${req.stateMachineArn.replace(':stateMachine:', ':execution:')}:${req.name}`);
    },
    async describe(arn) {
      return started.includes(arn)
        ? ({ status: 'SUCCEEDED', executionArn: arn, output: '{"ok":true}', stopDate: new Date(), $metadata: {} } as never)
        : undefined;
    },
    async stop() {},
    async history() {
      return [];
    },
  };
}

const runtime = fileRuntime();

describe('Class: RunService (a key claimed by a start that ended before writing its run)', () => {
  it("writes the run under the key's run id with that run's execution ARN, starts that execution, and its wait ends", async () => {
    const rt = runtime();
    // The first start, killed after the key's write: its run record's write never happens.
    const killed = new Error('killed between the key and the run record');
    const crashing = new RunStore({
      ...rt.db,
      commands: {
        send: async () => {
          throw killed;
        },
      } as never,
    });
    await expect(
      crashing.startRun({
        workflow: 'wf',
        runId: 'r-first',
        executionArn: `${EXECUTION_PREFIX}:r-first`,
        idempotencyKey: 'k1',
        input: { n: 1 },
      }),
    ).rejects.toBe(killed);
    expect(await rt.runs.getRun('r-first')).toBeUndefined();

    const ex = executions();
    const service = new RunService({ runtime: rt, executions: ex, catalog });
    const again = await service.start(ENTRY, { n: 1 }, { idempotencyKey: 'k1', runId: 'r-second' });
    expect([again.run.runId, again.reused, again.run.executionArn, ex.started]).toEqual([
      'r-first',
      false,
      `${EXECUTION_PREFIX}:r-first`,
      [`${EXECUTION_PREFIX}:r-first`],
    ]);
    expect((await rt.runs.getRun('r-first'))?.executionArn).toBe(`${EXECUTION_PREFIX}:r-first`);
    // The wait finds the execution the start started, and settles the run with its end.
    const done = await service.wait('r-first');
    expect([done.status, done.output]).toEqual(['SUCCEEDED', { ok: true }]);
  });

  it('settles a run an earlier version wrote with the ARN of another id: by the execution named after its own id', async () => {
    const rt = runtime();
    // As the earlier version wrote it: the key's run id, the execution ARN of the id its start
    // asked for, signed by a process that has ended since; the execution it started, named after
    // the run's id, has ended.
    await rt.runs.startRun({
      workflow: 'wf',
      runId: 'r-old',
      executionArn: `${EXECUTION_PREFIX}:r-asked`,
      startedBy: `4194303@${hostname()}`,
      idempotencyKey: 'k3',
      input: { n: 3 },
    });
    const ex = executions();
    await ex.start({ stateMachineArn: ENTRY.stateMachineArn, name: 'r-old', input: '{"n":3}' });
    const service = new RunService({ runtime: rt, executions: ex, catalog });
    // The key answers the run (its execution exists), rather than starting it once more.
    const again = await service.start(ENTRY, { n: 3 }, { idempotencyKey: 'k3', runId: 'r-new' });
    expect([again.run.runId, again.reused, ex.started]).toEqual(['r-old', true, [`${EXECUTION_PREFIX}:r-old`]]);
    const settled = await service.getRun('r-old');
    expect([settled.status, settled.output]).toEqual(['SUCCEEDED', { ok: true }]);
    // What `runs show --json` and the HTTP API show: the execution that ran, not the stored ARN.
    expect(runDetailsJson(await service.details('r-old')).run.executionArn).toBe(`${EXECUTION_PREFIX}:r-old`);
  });

  it('keeps a given execution ARN as it is when the run is written under the id asked for', async () => {
    const rt = runtime();
    const { run, reused } = await rt.runs.startRun({
      workflow: 'wf',
      runId: 'r-plain',
      executionArn: `${EXECUTION_PREFIX}:r-plain`,
      idempotencyKey: 'k2',
    });
    expect([run.runId, reused, run.executionArn]).toEqual(['r-plain', false, `${EXECUTION_PREFIX}:r-plain`]);
  });
});
