import { describe, expect, it } from 'vitest';
import {
  executeStateMachine,
  type HistoryEvent,
  type MapRun,
  type MapRunChild,
  type MapRunListener,
  type MapRunRecord,
  type TaskInvoker,
} from '@stepforge/engine';

const SM = 'arn:aws:states:us-east-1:123456789012:stateMachine:parent';

/** A listener that keeps what a run reports: Map Runs as they start and end, and each child with its history. */
function recorder() {
  const started: MapRunRecord[] = [];
  const ended: MapRunRecord[] = [];
  const live: MapRun[] = [];
  const children: { child: MapRunChild; events: HistoryEvent[]; status?: string }[] = [];
  const listener: MapRunListener = {
    started: (run) => {
      live.push(run);
      started.push(run.snapshot());
    },
    ended: (run) => ended.push(run.snapshot()),
    childStarted: (child) => {
      const entry: { child: MapRunChild; events: HistoryEvent[]; status?: string } = { child, events: [] };
      children.push(entry);
      return { onEvent: (e) => entry.events.push(e), ended: (r) => (entry.status = r.status) };
    },
  };
  return { listener, started, ended, live, children };
}

const distributed = (processor: Record<string, unknown>, map: Record<string, unknown> = {}) => ({
  StartAt: 'Fan',
  States: {
    Fan: {
      Type: 'Map',
      ItemProcessor: { ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' }, ...processor },
      End: true,
      ...map,
    },
  },
});

describe('Class: MapRun (a distributed Map run by executeStateMachine)', () => {
  it('runs each item as a child execution with its own ARN, context object and history, and reports the Map Run', async () => {
    const rec = recorder();
    const def = distributed(
      {
        StartAt: 'Who',
        States: {
          Who: {
            Type: 'Pass',
            Parameters: { 'item.$': '$', 'execution.$': '$$.Execution.Id', 'machine.$': '$$.StateMachine.Id' },
            End: true,
          },
        },
      },
      { Label: 'Rows', MaxConcurrency: 1 },
    );
    const r = await executeStateMachine(def, ['a', 'b'], { stateMachineArn: SM, stateMachineName: 'parent', mapRuns: rec.listener });
    expect(r.status).toBe('SUCCEEDED');
    const out = r.output as { item: string; execution: string; machine: string }[];
    expect(out.map((o) => o.item)).toEqual(['a', 'b']);
    expect(out[0]!.machine).toBe(`${SM}/Rows`);
    expect(out[0]!.execution).toMatch(/^arn:aws:states:us-east-1:123456789012:execution:parent\/Rows:[0-9a-f-]{36}$/);
    expect(rec.children.map((c) => c.child.executionArn)).toEqual(out.map((o) => o.execution));
    expect(rec.children[0]!.child).toMatchObject({ stateMachineArn: `${SM}/Rows`, input: 'a', definition: { StartAt: 'Who' } });
    expect(rec.children[0]!.events.map((e) => e.type)).toEqual([
      'ExecutionStarted',
      'PassStateEntered',
      'PassStateExited',
      'ExecutionSucceeded',
    ]);
    expect(rec.children.map((c) => c.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);

    const mapRunArn = r.events.find((e) => e.type === 'MapRunStarted')!.mapRunStartedEventDetails as { mapRunArn: string };
    expect(rec.started[0]).toMatchObject({ mapRunArn: mapRunArn.mapRunArn, status: 'RUNNING', itemCounts: { pending: 2, total: 2 } });
    expect(rec.ended[0]).toMatchObject({
      mapRunArn: mapRunArn.mapRunArn,
      executionArn: expect.stringContaining(':execution:parent:'),
      status: 'SUCCEEDED',
      maxConcurrency: 1,
      itemCounts: { succeeded: 2, pending: 0, running: 0, resultsWritten: 2, total: 2 },
    });
    expect(rec.ended[0]!.stopDate).toBeGreaterThanOrEqual(rec.ended[0]!.startDate);
  });

  it("gives a child execution no access to the parent's variables (it is an execution of its own)", async () => {
    const def = {
      QueryLanguage: 'JSONata',
      StartAt: 'Set',
      States: {
        Set: { Type: 'Pass', Assign: { secret: 42 }, Next: 'Fan' },
        Fan: {
          Type: 'Map',
          Items: [1],
          ItemProcessor: {
            ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
            StartAt: 'Read',
            States: { Read: { Type: 'Pass', Output: '{% $exists($secret) %}', End: true } },
          },
          End: true,
        },
      },
    };
    const inline = structuredClone(def);
    (inline.States.Fan.ItemProcessor.ProcessorConfig as { Mode: string }).Mode = 'INLINE';
    expect((await executeStateMachine(inline, {})).output).toEqual([true]);
    expect((await executeStateMachine(def, {})).output).toEqual([false]);
  });

  it('records no child history for ExecutionType EXPRESS (AWS lists no Express children), yet counts the items', async () => {
    const rec = recorder();
    const def = distributed({
      ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'EXPRESS' },
      StartAt: 'P',
      States: { P: { Type: 'Pass', End: true } },
    });
    const r = await executeStateMachine(def, [1, 2, 3], { mapRuns: rec.listener });
    expect(r.status).toBe('SUCCEEDED');
    expect(rec.children).toEqual([]);
    expect(rec.ended[0]!.itemCounts).toMatchObject({ succeeded: 3, total: 3 });
  });

  it('marks a Map Run ABORTED when its execution stops: the running items aborted, the others pending', async () => {
    const rec = recorder();
    const controller = new AbortController();
    const invoker: TaskInvoker = {
      invoke: (inv) =>
        new Promise((_resolve, reject) => {
          inv.signal.addEventListener('abort', () => reject(new Error('stopped')));
          setTimeout(() => controller.abort({ error: 'Stop', cause: 'test' }), 5);
        }),
    };
    const def = distributed(
      { StartAt: 'T', States: { T: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:slow', End: true } } },
      { MaxConcurrency: 2 },
    );
    const r = await executeStateMachine(def, [1, 2, 3, 4, 5], { invoker, signal: controller.signal, mapRuns: rec.listener });
    expect(r.status).toBe('ABORTED');
    expect(rec.ended[0]).toMatchObject({ status: 'ABORTED', itemCounts: { aborted: 2, running: 0, pending: 3, succeeded: 0 } });
    expect(rec.children.map((c) => c.status)).toEqual(['ABORTED', 'ABORTED']);
    expect(rec.children[0]!.events.at(-1)).toMatchObject({
      type: 'ExecutionAborted',
      executionAbortedEventDetails: { error: 'Stop', cause: 'test' },
    });
  });

  it('starts more items at once when an update raises MaxConcurrency, and re-checks a lowered tolerance at once', async () => {
    const rec = recorder();
    let running = 0;
    let peak = 0;
    const release: (() => void)[] = [];
    const invoker: TaskInvoker = {
      invoke: async (inv) => {
        if ((inv.input as { fail?: boolean }).fail) throw Object.assign(new Error('no'), { name: 'Bad' });
        running++;
        peak = Math.max(peak, running);
        await new Promise<void>((resolve) => release.push(resolve));
        running--;
        return inv.input;
      },
    };
    const def = distributed(
      { StartAt: 'T', States: { T: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:f', End: true } } },
      { MaxConcurrency: 1, ToleratedFailureCount: 1 },
    );
    const done = executeStateMachine(def, [{ fail: true }, {}, {}, {}, {}], { invoker, mapRuns: rec.listener });
    await until(() => running === 1);
    const run = rec.live[0]!;
    expect(run.snapshot().itemCounts).toMatchObject({ failed: 1, running: 1, pending: 3 });
    run.update({ maxConcurrency: 3 });
    await until(() => running === 3);
    expect(peak).toBe(3);
    run.update({ toleratedFailureCount: 0 });
    const r = await done;
    expect(r).toMatchObject({ status: 'FAILED', error: 'States.ExceedToleratedFailureThreshold' });
    expect(rec.ended[0]).toMatchObject({ status: 'FAILED', toleratedFailureCount: 0, itemCounts: { failed: 1, aborted: 3, pending: 1 } });
    expect(() => run.update({ maxConcurrency: 1 })).toThrow(
      expect.objectContaining({ name: 'MapRunNotRunning', message: expect.stringContaining('Map Run is FAILED') }),
    );
    release.splice(0).forEach((r) => r());
  });
});

async function until(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !predicate(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(predicate()).toBe(true);
}
