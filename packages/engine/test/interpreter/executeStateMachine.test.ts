import { describe, expect, it } from 'vitest';
import {
  createLambdaInvoker,
  createVirtualClock,
  executeStateMachine,
  prepareStateMachine,
  validateDefinition,
  type Checkpoint,
  type TaskInvoker,
} from '@stepforge/engine';

const passChain = (n: number) => {
  const States: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) States[`S${i}`] = i === n - 1 ? { Type: 'Pass', End: true } : { Type: 'Pass', Next: `S${i + 1}` };
  return { StartAt: 'S0', States };
};

describe('Function: executeStateMachine', () => {
  it('runs a Pass chain and writes AWS-shaped, linked history events', async () => {
    const r = await executeStateMachine(passChain(2), { a: 1 });
    expect(r.status).toBe('SUCCEEDED');
    expect(r.output).toEqual({ a: 1 });
    expect(r.events.map((e) => [e.id, e.previousEventId, e.type])).toEqual([
      [1, 0, 'ExecutionStarted'],
      [2, 0, 'PassStateEntered'],
      [3, 2, 'PassStateExited'],
      [4, 3, 'PassStateEntered'],
      [5, 4, 'PassStateExited'],
      [6, 5, 'ExecutionSucceeded'],
    ]);
    expect(r.events[1]!.stateEnteredEventDetails).toEqual({ input: '{"a":1}', inputDetails: { truncated: false }, name: 'S0' });
  });

  it('applies InputPath, Parameters with intrinsics and $$, ResultPath and OutputPath', async () => {
    const def = {
      StartAt: 'P',
      States: {
        P: {
          Type: 'Pass',
          InputPath: '$.in',
          Parameters: { 'greeting.$': "States.Format('hi {}', $.name)", 'exec.$': '$$.Execution.Name' },
          ResultPath: '$.out',
          OutputPath: '$.out',
          End: true,
        },
      },
    };
    const r = await executeStateMachine(def, { in: { name: 'ada' } }, { executionName: 'run-1' });
    expect(r.output).toEqual({ greeting: 'hi ada', exec: 'run-1' });
  });

  it('fails with States.Runtime and AWS wording when a path is missing', async () => {
    const r = await executeStateMachine({ StartAt: 'P', States: { P: { Type: 'Pass', InputPath: '$.nope', End: true } } }, {});
    expect(r.status).toBe('FAILED');
    expect(r.error).toBe('States.Runtime');
    expect(r.cause).toBe(
      "An error occurred while executing the state 'P' (entered at the event id #2). Invalid path '$.nope' : No results for path: $['nope']",
    );
  });

  it('lets a Parallel branch read outer variables but not write them', async () => {
    const def = {
      QueryLanguage: 'JSONata',
      StartAt: 'Init',
      States: {
        Init: { Type: 'Pass', Assign: { x: 1 }, Next: 'Par' },
        Par: {
          Type: 'Parallel',
          Branches: [{ StartAt: 'B', States: { B: { Type: 'Pass', Assign: { x: 99 }, Output: '{% $x %}', End: true } } }],
          Next: 'After',
        },
        After: { Type: 'Pass', Output: { outer: '{% $x %}', branch: '{% $states.input[0] %}' }, End: true },
      },
    };
    const r = await executeStateMachine(def, {});
    expect(r.status).toBe('SUCCEEDED');
    expect(r.output).toEqual({ outer: 1, branch: 1 });
  });

  it('retries with backoff capped by MaxDelaySeconds, then catches into ResultPath', async () => {
    const clock = createVirtualClock(0);
    let calls = 0;
    const invoker = createLambdaInvoker({
      flaky: () => {
        calls++;
        throw Object.assign(new Error('boom'), { name: 'Boom' });
      },
    });
    const def = {
      StartAt: 'T',
      States: {
        T: {
          Type: 'Task',
          Resource: 'arn:aws:lambda:us-east-1:123456789012:function:flaky',
          Retry: [{ ErrorEquals: ['Boom'], IntervalSeconds: 2, BackoffRate: 3, MaxAttempts: 3, MaxDelaySeconds: 10 }],
          Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.err', Next: 'Done' }],
          End: true,
        },
        Done: { Type: 'Pass', End: true },
      },
    };
    const r = await executeStateMachine(def, { k: 1 }, { invoker, clock });
    expect(calls).toBe(4);
    // 2 + 6 + min(18, 10) seconds of backoff, in virtual time.
    expect(clock.advanced()).toBe(18_000);
    expect(r.status).toBe('SUCCEEDED');
    expect((r.output as { err: { Error: string } }).err.Error).toBe('Boom');
    expect(r.events.filter((e) => e.type === 'LambdaFunctionFailed')).toHaveLength(4);
  });

  it('times a task out with States.Timeout (TaskTimedOut for service integrations)', async () => {
    const clock = createVirtualClock(0);
    const invoker: TaskInvoker = { invoke: (inv) => clock.sleep(60_000, inv.signal).then(() => 'late') };
    const def = {
      StartAt: 'T',
      States: { T: { Type: 'Task', Resource: 'arn:aws:states:::sqs:sendMessage', TimeoutSeconds: 5, End: true } },
    };
    const r = await executeStateMachine(def, {}, { invoker, clock });
    expect(r.status).toBe('FAILED');
    expect(r.error).toBe('States.Timeout');
    expect(r.events.find((e) => e.type === 'TaskTimedOut')?.taskTimedOutEventDetails).toEqual({
      error: 'States.Timeout',
      resource: 'sendMessage',
      resourceType: 'sqs',
    });
    expect(clock.advanced()).toBe(5_000);
  });

  it('fails a task whose heartbeats stop with States.HeartbeatTimeout', async () => {
    const clock = createVirtualClock(0);
    const invoker: TaskInvoker = {
      invoke: async (inv, hooks) => {
        await clock.sleep(2_000, inv.signal);
        hooks.heartbeat();
        await clock.sleep(10_000, inv.signal);
        return 'never';
      },
    };
    const def = {
      StartAt: 'T',
      States: { T: { Type: 'Task', Resource: 'arn:aws:states:::sqs:sendMessage.waitForTaskToken', HeartbeatSeconds: 3, End: true } },
    };
    const r = await executeStateMachine(def, {}, { invoker, clock, newTaskToken: () => 'tok-1' });
    expect(r.error).toBe('States.HeartbeatTimeout');
    expect(clock.advanced()).toBe(5_000);
  });

  it('passes a task token to .waitForTaskToken resources and through $$.Task.Token', async () => {
    let seen: unknown;
    const invoker: TaskInvoker = {
      invoke: async (inv) => {
        seen = inv.taskToken;
        return { echoed: inv.input };
      },
    };
    const def = {
      StartAt: 'T',
      States: {
        T: {
          Type: 'Task',
          Resource: 'arn:aws:states:::sqs:sendMessage.waitForTaskToken',
          Parameters: { 'token.$': '$$.Task.Token' },
          End: true,
        },
      },
    };
    const r = await executeStateMachine(def, {}, { invoker, newTaskToken: () => 'tok-42' });
    expect(seen).toBe('tok-42');
    expect(r.output).toEqual({ echoed: { token: 'tok-42' } });
  });

  it('reports checkpoints after each top-level transition and resumes from one', async () => {
    const def = {
      QueryLanguage: 'JSONata',
      StartAt: 'A',
      States: {
        A: { Type: 'Pass', Assign: { n: 1 }, Output: { v: 1 }, Next: 'B' },
        B: { Type: 'Pass', Output: { v: '{% $states.input.v + $n %}' }, Next: 'C' },
        C: { Type: 'Pass', End: true },
      },
    };
    const cps: Checkpoint[] = [];
    const full = await executeStateMachine(def, {}, { checkpoint: (c) => void cps.push(structuredClone(c)) });
    expect(cps.map((c) => c.stateName)).toEqual(['B', 'C']);
    expect(cps[0]).toMatchObject({ input: { v: 1 }, variables: { n: 1 }, eventCounter: 3, previousEventId: 3 });
    const resumed = await executeStateMachine(def, {}, { resumeFrom: cps[0] });
    expect(resumed.output).toEqual(full.output);
    expect(resumed.events[0]).toMatchObject({ id: 4, previousEventId: 3, type: 'PassStateEntered' });
    expect(resumed.events.map((e) => e.id)).toEqual(full.events.slice(3).map((e) => e.id));
  });

  it('redrives a failed execution from the state that failed', async () => {
    let fail = true;
    const invoker = createLambdaInvoker({
      fn: (e) => {
        if (fail) throw Object.assign(new Error('down'), { name: 'Down' });
        return { ok: e };
      },
    });
    const def = {
      StartAt: 'Prep',
      States: {
        Prep: { Type: 'Pass', Result: 'prepared', ResultPath: '$.prep', Next: 'Call' },
        Call: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:fn', End: true },
      },
    };
    const first = await executeStateMachine(def, {}, { invoker });
    expect(first.status).toBe('FAILED');
    expect(first.redrivePoint).toMatchObject({ stateName: 'Call', input: { prep: 'prepared' } });
    fail = false;
    const again = await executeStateMachine(def, {}, { invoker, redriveFrom: first.redrivePoint, redriveCount: 1 });
    expect(again.status).toBe('SUCCEEDED');
    expect(again.output).toEqual({ ok: { prep: 'prepared' } });
    expect(again.events[0]).toMatchObject({ type: 'ExecutionRedriven', executionRedrivenEventDetails: { redriveCount: 1 } });
    expect(again.events.some((e) => (e.stateEnteredEventDetails as { name?: string } | undefined)?.name === 'Prep')).toBe(false);
  });

  it('stops with ABORTED when the signal aborts during a Wait', async () => {
    const ac = new AbortController();
    const p = executeStateMachine({ StartAt: 'W', States: { W: { Type: 'Wait', Seconds: 30, End: true } } }, {}, { signal: ac.signal });
    setTimeout(() => ac.abort({ error: 'Stopped', cause: 'by test' }), 20);
    const r = await p;
    expect(r.status).toBe('ABORTED');
    expect(r.error).toBe('Stopped');
    expect(r.events.at(-1)).toMatchObject({
      type: 'ExecutionAborted',
      executionAbortedEventDetails: { error: 'Stopped', cause: 'by test' },
    });
    expect(r.events.map((e) => e.type)).toEqual(['ExecutionStarted', 'WaitStateEntered', 'WaitStateAborted', 'ExecutionAborted']);
  });

  it('raises States.DataLimitExceeded for a state output over 256 KiB', async () => {
    const big = 'x'.repeat(257 * 1024);
    const r = await executeStateMachine({ StartAt: 'P', States: { P: { Type: 'Pass', Result: big, End: true } } }, {});
    expect(r.error).toBe('States.DataLimitExceeded');
    expect(r.cause).toBe("The state/task 'P' returned a result with a size exceeding the maximum number of bytes service limit.");
  });

  it('tolerates Map iteration failures up to ToleratedFailureCount', async () => {
    const def = (tolerated: number) => ({
      StartAt: 'M',
      States: {
        M: {
          Type: 'Map',
          ToleratedFailureCount: tolerated,
          ItemProcessor: {
            StartAt: 'C',
            States: {
              C: { Type: 'Choice', Choices: [{ Variable: '$', NumericGreaterThan: 1, Next: 'Bad' }], Default: 'Ok' },
              Bad: { Type: 'Fail', Error: 'TooBig' },
              Ok: { Type: 'Pass', End: true },
            },
          },
          End: true,
        },
      },
    });
    const ok = await executeStateMachine(def(2), [1, 2, 3]);
    expect(ok.status).toBe('SUCCEEDED');
    expect(ok.output).toEqual([1, { Error: 'TooBig' }, { Error: 'TooBig' }]);
    const bad = await executeStateMachine(def(1), [1, 2, 3]);
    expect(bad.error).toBe('States.ExceedToleratedFailureThreshold');
  });

  it('rejects an invalid definition before running, naming every problem', async () => {
    const def = { StartAt: 'A', States: { A: { Type: 'Pass', Next: 'Nowhere', Bogus: 1 } } };
    const errors = validateDefinition(def);
    expect(errors.map((e) => [e.code, e.path])).toEqual([
      ['SCHEMA_VALIDATION_FAILED', '/States/A/Bogus'],
      ['MISSING_TRANSITION_TARGET', '/States/A/Next'],
    ]);
    let err: unknown;
    try {
      await executeStateMachine(def, {});
    } catch (e) {
      err = e;
    }
    expect((err as Error).name).toBe('InvalidDefinition');
    expect((err as Error).message).toContain("MISSING_TRANSITION_TARGET: Missing 'Next' target: Nowhere at /States/A/Next");
  });
});

describe('Function: executeStateMachine (execution timeout)', () => {
  it('ends with TIMED_OUT and ExecutionTimedOut when the top-level TimeoutSeconds elapses', async () => {
    const clock = createVirtualClock(0);
    const def = { TimeoutSeconds: 10, StartAt: 'W', States: { W: { Type: 'Wait', Seconds: 60, End: true } } };
    const r = await executeStateMachine(def, {}, { clock });
    expect(r.status).toBe('TIMED_OUT');
    expect(r.error).toBe('States.Timeout');
    expect(r.events.at(-1)).toMatchObject({ type: 'ExecutionTimedOut', executionTimedOutEventDetails: { error: 'States.Timeout' } });
    expect(clock.advanced()).toBe(10_000);
  });
});

describe('Function: prepareStateMachine', () => {
  it('checks the definition once and runs its own copy, with the same history as executeStateMachine', async () => {
    const definition = passChain(3) as { StartAt: string; States: Record<string, Record<string, unknown>> };
    const sm = prepareStateMachine(definition);
    // Editing the original afterwards reaches neither the check nor the runs.
    definition.States.S1!.Next = 'Nowhere';
    const clock = createVirtualClock();
    const a = await sm.execute({ a: 1 }, { clock, executionName: 'x' });
    const b = await executeStateMachine(passChain(3), { a: 1 }, { clock, executionName: 'x' });
    expect(a.status).toBe('SUCCEEDED');
    expect(a.events).toEqual(b.events);
    expect(sm.definition).toEqual(passChain(3));
  });

  it('refuses an invalid definition up front with InvalidDefinition and the offending path', () => {
    let err: unknown;
    try {
      prepareStateMachine({ StartAt: 'A', States: { A: { Type: 'Pass', Next: 'Missing' } } });
    } catch (e) {
      err = e;
    }
    expect((err as Error).name).toBe('InvalidDefinition');
    expect((err as { errors: { code: string; path: string }[] }).errors).toEqual([
      expect.objectContaining({ code: 'MISSING_TRANSITION_TARGET', path: '/States/A/Next' }),
    ]);
  });

  it('still checks the invoker supports every Task resource on each run', async () => {
    const sm = prepareStateMachine({
      StartAt: 'T',
      States: { T: { Type: 'Task', Resource: 'arn:aws:states:::sqs:sendMessage', End: true } },
    });
    const invoker: TaskInvoker = { invoke: async () => ({}), supports: () => 'Unsupported resource: sqs' };
    await expect(sm.execute({}, { invoker })).rejects.toMatchObject({
      name: 'InvalidDefinition',
      errors: [{ code: 'UNSUPPORTED_RESOURCE', path: '/States/T/Resource' }],
    });
  });

  it("keeps the variables of the last top-level state entered in a failed run's redrive point", async () => {
    const sm = prepareStateMachine({
      QueryLanguage: 'JSONata',
      StartAt: 'Set',
      States: {
        Set: { Type: 'Pass', Assign: { n: 1 }, Next: 'Again' },
        Again: { Type: 'Pass', Assign: { n: 2, m: 'x' }, Next: 'Boom' },
        Boom: { Type: 'Fail', Error: 'E' },
      },
    });
    const r = await sm.execute({});
    expect(r.status).toBe('FAILED');
    expect(r.redrivePoint).toMatchObject({ stateName: 'Boom', variables: { n: 2, m: 'x' }, transitions: 2 });
  });

  it('reads the clock once for up to eight events of a synchronous run of states, and again after an await or a large output', async () => {
    let t = 1000;
    const clock = { now: () => t++, sleep: () => Promise.resolve() };
    const times = (r: Awaited<ReturnType<typeof executeStateMachine>>) => r.events.map((e) => [e.type, e.timestamp]);
    // The start time (1000), then one read for the states run without an await between them; the
    // execution's end comes after one.
    const plain = await executeStateMachine(passChain(3), {}, { clock });
    expect(times(plain)).toEqual([
      ['ExecutionStarted', 1001],
      ['PassStateEntered', 1001],
      ['PassStateExited', 1001],
      ['PassStateEntered', 1001],
      ['PassStateExited', 1001],
      ['PassStateEntered', 1001],
      ['PassStateExited', 1001],
      ['ExecutionSucceeded', 1002],
    ]);
    // A read serves eight events that read the clock (a state's entry takes the exit before it):
    // S6's exit is the ninth.
    t = 3000;
    const long = (await executeStateMachine(passChain(10), {}, { clock })).events;
    expect(long.filter((e) => e.type === 'PassStateExited').map((e) => e.timestamp)).toEqual([
      3001, 3001, 3001, 3001, 3001, 3001, 3002, 3002, 3002, 3002,
    ]);
    // A checkpoint is awaited: the next state's entry reads the clock again.
    t = 2000;
    const checkpointed = await executeStateMachine(passChain(2), {}, { clock, checkpoint: () => Promise.resolve() });
    expect(times(checkpointed)).toEqual([
      ['ExecutionStarted', 2001],
      ['PassStateEntered', 2001],
      ['PassStateExited', 2001],
      ['PassStateEntered', 2002],
      ['PassStateExited', 2002],
      ['ExecutionSucceeded', 2003],
    ]);
    // A state whose output is large may have worked a while: the event after it reads the clock.
    t = 4000;
    const large = await executeStateMachine(passChain(2), { big: 'x'.repeat(5000) }, { clock });
    expect(times(large)).toEqual([
      ['ExecutionStarted', 4001],
      ['PassStateEntered', 4001],
      ['PassStateExited', 4002],
      ['PassStateEntered', 4002],
      ['PassStateExited', 4003],
      ['ExecutionSucceeded', 4004],
    ]);
  });

  it('stops executions that share no signal of their own, with no listener-leak warning for many tasks in flight', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const release: (() => void)[] = [];
      const invoker: TaskInvoker = { invoke: () => new Promise((r) => release.push(() => r({ ok: true }))) };
      const def = {
        StartAt: 'T',
        States: { T: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:f', End: true } },
      };
      const runs = Array.from({ length: 25 }, () => executeStateMachine(def, {}, { invoker }));
      await expect.poll(() => release.length).toBe(25);
      for (const r of release) r();
      expect((await Promise.all(runs)).map((r) => r.status)).toEqual(Array(25).fill('SUCCEEDED'));
      // A caller's signal still stops its own execution, and only it.
      const stop = new AbortController();
      const stopped = executeStateMachine(def, {}, { invoker, signal: stop.signal });
      const other = executeStateMachine(def, {}, { invoker });
      await expect.poll(() => release.length).toBe(27);
      stop.abort();
      expect((await stopped).status).toBe('ABORTED');
      release.at(-1)!();
      expect((await other).status).toBe('SUCCEEDED');
      await new Promise((r) => setImmediate(r));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });
});
