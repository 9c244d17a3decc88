// RunService.start in the process that owns the engine hands StartExecution to the engine's
// ExecutionManager directly; what the caller sees must be what the Step Functions API would say.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStack, type EmbeddedStack } from '../src/EmbeddedStack.js';
import { EmbeddedRunService } from '../src/RunService.js';

const QUICKSTART = resolve(fileURLToPath(new URL('../../../examples/quickstart.chain.yaml', import.meta.url)));

let dir: string;
let stack: EmbeddedStack;
let service: EmbeddedRunService;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sf-runservice-'));
  stack = await openStack({ projectDir: dir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
  service = new EmbeddedRunService(stack, dir);
});
afterAll(async () => {
  await stack.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Class: EmbeddedRunService (owner of the engine)', () => {
  it('starts the execution in its own engine, named by the run id, and the run succeeds', async () => {
    expect(stack.engine).toBeDefined();
    const { entry } = await service.catalog.registerFile(QUICKSTART);
    const { run } = await service.start(entry, { topic: 'tides' });
    expect(stack.engine!.manager.describeExecution({ executionArn: run.executionArn }).name).toBe(run.runId);
    expect((await service.wait(run.runId)).status).toBe('SUCCEEDED');
  });

  it("fails with the API's error name when the engine refuses the start, and records the run as FAILED", async () => {
    const { entry } = await service.catalog.registerFile(QUICKSTART);
    const gone = { ...entry, stateMachineArn: entry.stateMachineArn.replace(/:[^:]+$/, ':no-such-machine') };
    const err = await service.start(gone, { topic: 'tides' }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.name).toBe('StateMachineDoesNotExist');
    expect(err?.message).toContain('no-such-machine');
    const failed = (await stack.runtime.runs.listRuns()).filter((r) => r.status === 'FAILED');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.error).toMatchObject({ name: 'StateMachineDoesNotExist' });
  });

  it('finds the run an earlier attempt began when a start is repeated with its run id, and starts its execution once', async () => {
    const { entry } = await service.catalog.registerFile(QUICKSTART);
    const runId = '5f6e1c2a-0000-4000-8000-000000000001';
    // As if the first attempt wrote the run record and lost the stack before StartExecution.
    await stack.runtime.runs.startRun({
      workflow: entry.name,
      runId,
      executionArn: `${entry.stateMachineArn.replace(':stateMachine:', ':execution:')}:${runId}`,
      input: { topic: 'tides' },
    });
    const again = await service.start(entry, { topic: 'tides' }, { runId });
    expect(again).toMatchObject({ reused: false, run: { runId, status: 'RUNNING' } });
    expect((await service.wait(runId)).status).toBe('SUCCEEDED');
    // Once more, after the execution ended: still that run, nothing started a second time.
    const third = await service.start(entry, { topic: 'tides' }, { runId });
    expect(third.run.runId).toBe(runId);
    expect((await service.getRun(runId)).status).toBe('SUCCEEDED');
    expect((await stack.runtime.runs.listRuns()).filter((r) => r.runId === runId)).toHaveLength(1);
    const listed = stack.engine!.manager.listExecutions({ stateMachineArn: entry.stateMachineArn }) as { executions: { name: string }[] };
    expect(listed.executions.filter((e) => e.name === runId)).toHaveLength(1);
  });
});
