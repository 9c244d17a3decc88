// The owner calls its engine in process for a run's executions (engineExecutions): no HTTP request
// and no SDK client, answers shaped as the Step Functions client returns them over loopback (the
// same fields, dates as Dates), and the API's error names.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sfnExecutions } from '@stepforge/runtime';
import { openStack, type EmbeddedStack } from '../src/EmbeddedStack.js';
import { engineExecutions } from '../src/engineExecutions.js';
import { embeddedStateMachineArn, engineStateMachines } from '../src/engineStateMachines.js';

const ROLE = 'arn:aws:iam::123456789012:role/StepforgeEmbedded';
const executionArn = (machine: string, name: string) => `arn:aws:states:us-east-1:123456789012:execution:${machine}:${name}`;

/** Parallel, Map, Choice, a Fail caught and retried: most kinds of history event, and failures. */
const BUSY = {
  QueryLanguage: 'JSONata',
  StartAt: 'Both',
  States: {
    Both: {
      Type: 'Parallel',
      Branches: [
        { StartAt: 'One', States: { One: { Type: 'Pass', Output: 1, End: true } } },
        {
          StartAt: 'Each',
          States: {
            Each: {
              Type: 'Map',
              Items: '{% [1, 2, 3] %}',
              ItemProcessor: { StartAt: 'Double', States: { Double: { Type: 'Pass', Output: '{% $states.input * 2 %}', End: true } } },
              End: true,
            },
          },
        },
      ],
      Next: 'Pick',
    },
    Pick: {
      Type: 'Choice',
      Choices: [{ Condition: '{% $states.input[0] = 1 %}', Next: 'Break' }],
      Default: 'Done',
    },
    Break: {
      Type: 'Parallel',
      Branches: [{ StartAt: 'Boom', States: { Boom: { Type: 'Fail', Error: 'Custom.Boom', Cause: 'on purpose' } } }],
      Retry: [{ ErrorEquals: ['Custom.Boom'], MaxAttempts: 1, IntervalSeconds: 0 }],
      Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Done', Output: '{% $states.errorOutput %}' }],
      Next: 'Done',
    },
    Done: { Type: 'Pass', End: true },
  },
};
const FAILS = { StartAt: 'No', States: { No: { Type: 'Fail', Error: 'Nope', Cause: 'never' } } };
const WAITS = { StartAt: 'Long', States: { Long: { Type: 'Wait', Seconds: 3600, End: true } } };

let dir: string;
let stack: EmbeddedStack;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sf-executions-'));
  stack = await openStack({ projectDir: dir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
  const machines = engineStateMachines(stack);
  for (const [name, definition] of Object.entries({ busy: BUSY, fails: FAILS, waits: WAITS }))
    await machines.create({ name, definition: JSON.stringify(definition), roleArn: ROLE, type: 'STANDARD' });
});
afterAll(async () => {
  await stack.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An answer without the SDK's request metadata, which only the loopback side has. */
const withoutMetadata = <T>(v: T): T => {
  const { $metadata: _, ...rest } = v as T & { $metadata?: unknown };
  return rest as T;
};

describe('Function: engineExecutions (owner of the engine)', () => {
  it('describes and reads the history of ended executions as the Step Functions client does over loopback, without a request', async () => {
    const inProcess = engineExecutions(stack);
    const overLoopback = sfnExecutions(stack.sfn);
    for (const machine of ['busy', 'fails']) {
      const arn = executionArn(machine, `${machine}-1`);
      await inProcess.start({ stateMachineArn: embeddedStateMachineArn(machine), name: `${machine}-1`, input: '{"a":1}' });
      await inProcess.waitFor!(arn);
      const send = vi.spyOn(stack.sfn, 'send');
      let described, history;
      try {
        described = await inProcess.describe(arn);
        history = await inProcess.history(arn);
        expect(send).not.toHaveBeenCalled();
      } finally {
        send.mockRestore();
      }
      const expected = await overLoopback.describe(arn);
      expect(withoutMetadata(described)).toEqual(withoutMetadata(expected));
      expect(described!.startDate).toBeInstanceOf(Date);
      expect(described!.status).toBe(machine === 'busy' ? 'SUCCEEDED' : 'FAILED');
      const expectedHistory = await overLoopback.history(arn);
      expect(history).toEqual(expectedHistory);
      expect(history![0]!.timestamp).toBeInstanceOf(Date);
      if (machine === 'busy') {
        const types = new Set(history!.map((e) => e.type));
        for (const t of ['ParallelStateStarted', 'MapIterationSucceeded', 'ChoiceStateEntered', 'FailStateEntered', 'ExecutionSucceeded'])
          expect(types).toContain(t);
        expect(history!.length).toBeGreaterThan(30);
      }
    }
  });

  it("answers a missing execution with undefined and a bad ARN with the API's error name, as over loopback", async () => {
    const inProcess = engineExecutions(stack);
    const overLoopback = sfnExecutions(stack.sfn);
    const missing = executionArn('busy', 'never-started');
    expect(await inProcess.describe(missing)).toBeUndefined();
    expect(await overLoopback.describe(missing)).toBeUndefined();
    const errorOf = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: { name: string; $fault?: string; $metadata?: { httpStatusCode?: number } }) => [e.name, e.$fault, e.$metadata?.httpStatusCode],
      );
    expect(await errorOf(inProcess.history('not-an-arn'))).toEqual(await errorOf(overLoopback.history('not-an-arn')));
    expect(await errorOf(inProcess.history(missing))).toEqual(['ExecutionDoesNotExist', 'client', 400]);
    expect(await errorOf(inProcess.start({ stateMachineArn: embeddedStateMachineArn('busy'), name: 'busy-1', input: '{"a":2}' }))).toEqual(
      await errorOf(overLoopback.start({ stateMachineArn: embeddedStateMachineArn('busy'), name: 'busy-1', input: '{"a":2}' })),
    );
  });

  it('stops a running execution in process, its end as DescribeExecution reads it', async () => {
    const inProcess = engineExecutions(stack);
    const arn = executionArn('waits', 'waits-1');
    await inProcess.start({ stateMachineArn: embeddedStateMachineArn('waits'), name: 'waits-1', input: '{}' });
    expect((await inProcess.describe(arn))!.status).toBe('RUNNING');
    await inProcess.stop(arn, 'Stopped.ByTest', 'a test stopped it');
    const stopped = await inProcess.describe(arn);
    expect([stopped!.status, stopped!.error, stopped!.cause]).toEqual(['ABORTED', 'Stopped.ByTest', 'a test stopped it']);
    expect(stopped!.stopDate).toBeInstanceOf(Date);
    expect(withoutMetadata(stopped)).toEqual(withoutMetadata(await sfnExecutions(stack.sfn).describe(arn)));
  });
});
