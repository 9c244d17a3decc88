import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  DescribeMapRunCommand,
  DescribeStateMachineForExecutionCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  ListMapRunsCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
  UpdateMapRunCommand,
} from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngineServer, type EngineServer } from '@stepforge/engine';
import { eventually, sdkError, sfnClient, waitForStatus } from './helpers.js';

const ROLE = 'arn:aws:iam::123456789012:role/test';
const FN = 'arn:aws:lambda:us-east-1:123456789012:function:';

/** Items held until a test lets them go, so a Map Run can be looked at (and tuned) while it runs. */
class Gate {
  running = 0;
  peak = 0;
  private waiters: (() => void)[] = [];
  async pass(): Promise<void> {
    this.running++;
    this.peak = Math.max(this.peak, this.running);
    await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.running--;
  }
  releaseAll(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

let gate = new Gate();
/** Off: `hold` items run straight through (a resumed execution's second try). */
let holding = true;

const handlers = {
  /** Fails for `{ fail: true }`, else waits at the gate when asked to, then echoes. */
  item: async (event: unknown) => {
    const e = event as { fail?: boolean; hold?: boolean };
    if (e.hold && holding) await gate.pass();
    if (e.fail) throw Object.assign(new Error('item failed'), { name: 'ItemFailed' });
    return event;
  },
};

/** A state machine whose distributed Map (labelled `Items`) runs the `item` Lambda per item. */
function distributedMap(map: Record<string, unknown>): string {
  return JSON.stringify({
    StartAt: 'Fan',
    States: {
      Fan: {
        Type: 'Map',
        Label: 'Items',
        ItemProcessor: {
          ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
          StartAt: 'Work',
          States: { Work: { Type: 'Task', Resource: `${FN}item`, End: true } },
        },
        End: true,
        ...map,
      },
    },
  });
}

describe('Map Runs (ListMapRuns, DescribeMapRun, UpdateMapRun) through the AWS SDK', () => {
  let server: EngineServer;
  let client: SFNClient;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stepforge-mapruns-'));
    server = await startEngineServer({ dataDir: dir, handlers });
    client = sfnClient(server.url);
  });
  afterAll(async () => {
    gate.releaseAll();
    client.destroy();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(name: string, map: Record<string, unknown>, input: unknown): Promise<{ sm: string; exec: string }> {
    const sm = (await client.send(new CreateStateMachineCommand({ name, definition: distributedMap(map), roleArn: ROLE })))
      .stateMachineArn!;
    const exec = (await client.send(new StartExecutionCommand({ stateMachineArn: sm, input: JSON.stringify(input) }))).executionArn!;
    return { sm, exec };
  }

  async function onlyMapRun(exec: string): Promise<string> {
    const listed = await client.send(new ListMapRunsCommand({ executionArn: exec }));
    expect(listed.mapRuns).toHaveLength(1);
    return listed.mapRuns![0]!.mapRunArn!;
  }

  it('lists and describes a finished Map Run with its settings and item counts, under the ARN its MapRunStarted event names', async () => {
    const { sm, exec } = await start('finished', { MaxConcurrency: 2, ToleratedFailureCount: 1 }, [{ n: 1 }, { fail: true }, { n: 3 }]);
    expect((await waitForStatus(client, exec)).status).toBe('SUCCEEDED');

    const listed = await client.send(new ListMapRunsCommand({ executionArn: exec }));
    expect(listed.nextToken).toBeUndefined();
    expect(listed.mapRuns).toHaveLength(1);
    const item = listed.mapRuns![0]!;
    expect(item.executionArn).toBe(exec);
    expect(item.stateMachineArn).toBe(`${sm}/Items`);
    expect(item.mapRunArn).toMatch(/^arn:aws:states:us-east-1:123456789012:mapRun:finished\/Items:[0-9a-f-]{36}$/);
    expect(item.startDate).toBeInstanceOf(Date);
    expect(item.stopDate!.getTime()).toBeGreaterThanOrEqual(item.startDate!.getTime());

    const history = await client.send(new GetExecutionHistoryCommand({ executionArn: exec }));
    const started = history.events!.find((e) => e.type === 'MapRunStarted');
    expect(started?.mapRunStartedEventDetails?.mapRunArn).toBe(item.mapRunArn);

    const d = await client.send(new DescribeMapRunCommand({ mapRunArn: item.mapRunArn }));
    const counts = {
      aborted: 0,
      failed: 1,
      failuresNotRedrivable: 0,
      pending: 0,
      pendingRedrive: 0,
      resultsWritten: 3,
      running: 0,
      succeeded: 2,
      timedOut: 0,
      total: 3,
    };
    expect(d).toMatchObject({
      mapRunArn: item.mapRunArn,
      executionArn: exec,
      status: 'SUCCEEDED',
      maxConcurrency: 2,
      toleratedFailureCount: 1,
      toleratedFailurePercentage: 0,
      redriveCount: 0,
      itemCounts: counts,
      executionCounts: counts,
    });
    expect(d.startDate).toEqual(item.startDate);
    expect(d.stopDate).toEqual(item.stopDate);

    // Each item ran as a child workflow execution, listed by the Map Run and not by the state machine.
    const children = (await client.send(new ListExecutionsCommand({ mapRunArn: item.mapRunArn }))).executions!;
    expect(children).toHaveLength(3);
    for (const c of children) {
      expect(c.executionArn).toMatch(/^arn:aws:states:us-east-1:123456789012:execution:finished\/Items:[0-9a-f-]{36}$/);
      expect(c).toMatchObject({ stateMachineArn: `${sm}/Items`, mapRunArn: item.mapRunArn, itemCount: 1 });
    }
    expect(children.map((c) => c.status).sort()).toEqual(['FAILED', 'SUCCEEDED', 'SUCCEEDED']);
    expect((await client.send(new ListExecutionsCommand({ stateMachineArn: sm }))).executions!.map((e) => e.executionArn)).toEqual([exec]);
    const failedChild = children.find((c) => c.status === 'FAILED')!;
    expect(await client.send(new DescribeExecutionCommand({ executionArn: failedChild.executionArn }))).toMatchObject({
      stateMachineArn: `${sm}/Items`,
      mapRunArn: item.mapRunArn,
      input: '{"fail":true}',
      error: 'ItemFailed',
      cause: expect.stringContaining('item failed'),
      redriveStatus: 'NOT_REDRIVABLE',
    });
    const okChild = children.find((c) => c.status === 'SUCCEEDED')!;
    const childHistory = await client.send(new GetExecutionHistoryCommand({ executionArn: okChild.executionArn }));
    expect(childHistory.events!.map((e) => e.type)).toEqual([
      'ExecutionStarted',
      'TaskStateEntered',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
      'TaskStateExited',
      'ExecutionSucceeded',
    ]);
    const childMachine = await client.send(new DescribeStateMachineForExecutionCommand({ executionArn: okChild.executionArn }));
    expect(childMachine).toMatchObject({ stateMachineArn: `${sm}/Items`, mapRunArn: item.mapRunArn, label: 'Items' });
    expect(JSON.parse(childMachine.definition!)).toMatchObject({ StartAt: 'Work', States: { Work: { Type: 'Task' } } });
    expect(await sdkError(client.send(new ListExecutionsCommand({ mapRunArn: item.mapRunArn, stateMachineArn: sm })))).toMatchObject({
      name: 'ValidationException',
      message: expect.stringContaining('not both'),
    });

    // A finished Map Run cannot be tuned.
    const late = await sdkError(client.send(new UpdateMapRunCommand({ mapRunArn: item.mapRunArn, maxConcurrency: 5 })));
    expect(late.name).toBe('ValidationException');
    expect(late.message).toContain('is SUCCEEDED: only a RUNNING Map Run can be updated');
  });

  it('raises a running Map Run’s concurrency for the items it has not started yet', async () => {
    gate = new Gate();
    const items = Array.from({ length: 4 }, (_, i) => ({ n: i, hold: true }));
    const { exec } = await start('widened', { MaxConcurrency: 1 }, items);
    await eventually(() => gate.running === 1);
    const arn = await onlyMapRun(exec);
    const running = await client.send(new DescribeMapRunCommand({ mapRunArn: arn }));
    expect(running).toMatchObject({
      status: 'RUNNING',
      maxConcurrency: 1,
      itemCounts: { running: 1, pending: 3, succeeded: 0, resultsWritten: 0 },
    });
    expect(running.stopDate).toBeUndefined();
    expect((await client.send(new ListMapRunsCommand({ executionArn: exec }))).mapRuns![0]!.stopDate).toBeUndefined();

    const [runningChild] = (await client.send(new ListExecutionsCommand({ mapRunArn: arn, statusFilter: 'RUNNING' }))).executions!;
    expect(await sdkError(client.send(new StopExecutionCommand({ executionArn: runningChild!.executionArn })))).toMatchObject({
      name: 'ValidationException',
      message: expect.stringContaining('is a child execution of Map Run'),
    });

    await client.send(new UpdateMapRunCommand({ mapRunArn: arn, maxConcurrency: 3 }));
    // The held item keeps running; two more start at once.
    await eventually(() => gate.running === 3);
    expect(gate.peak).toBe(3);
    expect(await client.send(new DescribeMapRunCommand({ mapRunArn: arn }))).toMatchObject({
      maxConcurrency: 3,
      itemCounts: { running: 3, pending: 1 },
    });
    gate.releaseAll();
    await eventually(() => gate.running === 1);
    gate.releaseAll();
    expect((await waitForStatus(client, exec)).status).toBe('SUCCEEDED');
    expect(gate.peak).toBe(3);
    expect(await client.send(new DescribeMapRunCommand({ mapRunArn: arn }))).toMatchObject({
      status: 'SUCCEEDED',
      maxConcurrency: 3,
      itemCounts: { succeeded: 4, running: 0, pending: 0, total: 4 },
    });
  });

  it('lets a running Map Run tolerate failures the definition did not, and fails it when a lowered tolerance is already exceeded', async () => {
    gate = new Gate();
    const tolerant = await start('tolerant', { MaxConcurrency: 1 }, [{ hold: true }, { fail: true }, { fail: true }]);
    await eventually(() => gate.running === 1);
    const tolerantRun = await onlyMapRun(tolerant.exec);
    await client.send(new UpdateMapRunCommand({ mapRunArn: tolerantRun, toleratedFailureCount: 2 }));
    gate.releaseAll();
    expect((await waitForStatus(client, tolerant.exec)).status).toBe('SUCCEEDED');
    expect(await client.send(new DescribeMapRunCommand({ mapRunArn: tolerantRun }))).toMatchObject({
      status: 'SUCCEEDED',
      toleratedFailureCount: 2,
      itemCounts: { succeeded: 1, failed: 2 },
    });

    gate = new Gate();
    const strict = await start('strict', { MaxConcurrency: 1, ToleratedFailurePercentage: 50 }, [
      { fail: true },
      { hold: true },
      { n: 3 },
      { n: 4 },
    ]);
    await eventually(() => gate.running === 1);
    const strictRun = await onlyMapRun(strict.exec);
    expect(await client.send(new DescribeMapRunCommand({ mapRunArn: strictRun }))).toMatchObject({
      status: 'RUNNING',
      toleratedFailurePercentage: 50,
      itemCounts: { failed: 1, running: 1, pending: 2 },
    });
    await client.send(new UpdateMapRunCommand({ mapRunArn: strictRun, toleratedFailurePercentage: 10 }));
    const failed = await waitForStatus(client, strict.exec);
    expect(failed).toMatchObject({ status: 'FAILED', error: 'States.ExceedToleratedFailureThreshold' });
    // The held item is aborted, the unstarted ones stay pending.
    expect(await client.send(new DescribeMapRunCommand({ mapRunArn: strictRun }))).toMatchObject({
      status: 'FAILED',
      toleratedFailurePercentage: 10,
      itemCounts: { failed: 1, aborted: 1, pending: 2, running: 0, succeeded: 0, resultsWritten: 0, total: 4 },
    });
    gate.releaseAll();
    // The child that was running is aborted with the Map Run; its history says so.
    const strictChildren = (await client.send(new ListExecutionsCommand({ mapRunArn: strictRun }))).executions!;
    expect(strictChildren.map((c) => c.status).sort()).toEqual(['ABORTED', 'FAILED']);
    const aborted = strictChildren.find((c) => c.status === 'ABORTED')!;
    const abortedHistory = await client.send(new GetExecutionHistoryCommand({ executionArn: aborted.executionArn }));
    expect(abortedHistory.events!.at(-1)!.type).toBe('ExecutionAborted');
  });

  it('pages ListMapRuns and keeps Map Runs across a restart', async () => {
    const definition = JSON.stringify({
      StartAt: 'Loop',
      States: {
        Loop: {
          Type: 'Map',
          ItemProcessor: {
            ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
            StartAt: 'P',
            States: { P: { Type: 'Pass', End: true } },
          },
          ResultPath: null,
          Next: 'Again',
        },
        Again: {
          Type: 'Map',
          ItemProcessor: { ProcessorConfig: { Mode: 'DISTRIBUTED' }, StartAt: 'P', States: { P: { Type: 'Pass', End: true } } },
          ResultPath: null,
          Next: 'Third',
        },
        Third: {
          Type: 'Map',
          ItemProcessor: { ProcessorConfig: { Mode: 'DISTRIBUTED' }, StartAt: 'P', States: { P: { Type: 'Pass', End: true } } },
          End: true,
        },
      },
    });
    const sm = (await client.send(new CreateStateMachineCommand({ name: 'three', definition, roleArn: ROLE }))).stateMachineArn!;
    const exec = (await client.send(new StartExecutionCommand({ stateMachineArn: sm, input: '[1,2]' }))).executionArn!;
    expect((await waitForStatus(client, exec)).status).toBe('SUCCEEDED');

    const first = await client.send(new ListMapRunsCommand({ executionArn: exec, maxResults: 2 }));
    expect(first.mapRuns!.map((r) => r.mapRunArn!.split('/')[1]!.split(':')[0])).toEqual(['Loop', 'Again']);
    expect(first.nextToken).toBeDefined();
    const second = await client.send(new ListMapRunsCommand({ executionArn: exec, maxResults: 2, nextToken: first.nextToken }));
    expect(second.mapRuns!.map((r) => r.mapRunArn!.split('/')[1]!.split(':')[0])).toEqual(['Third']);
    expect(second.nextToken).toBeUndefined();
    expect(await sdkError(client.send(new ListMapRunsCommand({ executionArn: exec, nextToken: 'bogus' })))).toMatchObject({
      name: 'InvalidToken',
    });

    const arns = [...first.mapRuns!, ...second.mapRuns!].map((r) => r.mapRunArn!);
    client.destroy();
    await server.close();
    server = await startEngineServer({ dataDir: dir, handlers });
    client = sfnClient(server.url);
    const after = await client.send(new ListMapRunsCommand({ executionArn: exec }));
    expect(after.mapRuns!.map((r) => r.mapRunArn)).toEqual(arns);
    expect(await client.send(new DescribeMapRunCommand({ mapRunArn: arns[2] }))).toMatchObject({
      status: 'SUCCEEDED',
      maxConcurrency: 0,
      itemCounts: { succeeded: 2, total: 2, resultsWritten: 2 },
    });
    const kept = (await client.send(new ListExecutionsCommand({ mapRunArn: arns[2] }))).executions!;
    expect(kept.map((c) => c.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    const keptHistory = await client.send(new GetExecutionHistoryCommand({ executionArn: kept[0]!.executionArn }));
    expect(keptHistory.events!.map((e) => e.type)).toEqual([
      'ExecutionStarted',
      'PassStateEntered',
      'PassStateExited',
      'ExecutionSucceeded',
    ]);
  });

  it('a restart marks the Map Run and child it interrupted ABORTED, and the resumed execution runs its Map state as a new Map Run', async () => {
    gate = new Gate();
    const { exec } = await start('resumed', { MaxConcurrency: 1 }, [{ hold: true }, { n: 2 }]);
    await eventually(() => gate.running === 1);
    const first = await onlyMapRun(exec);
    const [child] = (await client.send(new ListExecutionsCommand({ mapRunArn: first }))).executions!;
    expect(child!.status).toBe('RUNNING');

    client.destroy();
    await server.close();
    gate.releaseAll();
    holding = false;
    try {
      server = await startEngineServer({ dataDir: dir, handlers });
      client = sfnClient(server.url);
      expect((await waitForStatus(client, exec)).status).toBe('SUCCEEDED');
    } finally {
      holding = true;
    }
    const runs = (await client.send(new ListMapRunsCommand({ executionArn: exec }))).mapRuns!;
    expect(runs.map((r) => r.mapRunArn)[0]).toBe(first);
    expect(runs).toHaveLength(2);
    expect(await client.send(new DescribeMapRunCommand({ mapRunArn: first }))).toMatchObject({
      status: 'ABORTED',
      itemCounts: { aborted: 1, running: 0, pending: 1 },
    });
    expect(await client.send(new DescribeMapRunCommand({ mapRunArn: runs[1]!.mapRunArn }))).toMatchObject({
      status: 'SUCCEEDED',
      itemCounts: { succeeded: 2 },
    });
    expect(await client.send(new DescribeExecutionCommand({ executionArn: child!.executionArn }))).toMatchObject({ status: 'ABORTED' });
    const history = await client.send(new GetExecutionHistoryCommand({ executionArn: child!.executionArn }));
    expect(history.events!.map((e) => [e.id, e.previousEventId, e.type])).toEqual([
      [1, 0, 'ExecutionStarted'],
      [2, 1, 'ExecutionAborted'],
    ]);
  });

  it('answers the AWS errors: InvalidArn, ResourceNotFound, ExecutionDoesNotExist and ValidationException', async () => {
    const exec = 'arn:aws:states:us-east-1:123456789012:execution:nothing:x';
    const missingRun = 'arn:aws:states:us-east-1:123456789012:mapRun:nothing/Items:00000000-0000-0000-0000-000000000000';
    expect(await sdkError(client.send(new ListMapRunsCommand({ executionArn: exec })))).toMatchObject({ name: 'ExecutionDoesNotExist' });
    expect(
      await sdkError(client.send(new ListMapRunsCommand({ executionArn: 'arn:aws:states:us-east-1:1:stateMachine:x' }))),
    ).toMatchObject({ name: 'InvalidArn' });
    expect(await sdkError(client.send(new DescribeMapRunCommand({ mapRunArn: missingRun })))).toMatchObject({
      name: 'ResourceNotFound',
      message: expect.stringContaining(missingRun),
    });
    expect(await sdkError(client.send(new DescribeMapRunCommand({ mapRunArn: exec })))).toMatchObject({
      name: 'InvalidArn',
      message: expect.stringContaining('arn:…:mapRun:<state machine>/<label>:<id>'),
    });
    expect(await sdkError(client.send(new UpdateMapRunCommand({ mapRunArn: missingRun, maxConcurrency: 1 })))).toMatchObject({
      name: 'ResourceNotFound',
    });
    expect(await sdkError(client.send(new UpdateMapRunCommand({ mapRunArn: missingRun, maxConcurrency: -1 })))).toMatchObject({
      name: 'ValidationException',
      message: expect.stringContaining("at 'maxConcurrency' failed to satisfy constraint"),
    });
    expect(
      await sdkError(client.send(new UpdateMapRunCommand({ mapRunArn: missingRun, toleratedFailurePercentage: 100.5 }))),
    ).toMatchObject({
      name: 'ValidationException',
      message: expect.stringContaining("at 'toleratedFailurePercentage'"),
    });
    expect(await sdkError(client.send(new UpdateMapRunCommand({ mapRunArn: missingRun })))).toMatchObject({
      name: 'ValidationException',
      message: expect.stringContaining('give at least one of maxConcurrency'),
    });
    expect(await sdkError(client.send(new ListExecutionsCommand({ mapRunArn: missingRun })))).toMatchObject({ name: 'ResourceNotFound' });
  });
});
