import { computeStepProgress, readableCause, type ProgressStep } from '@stepforge/runtime';
import { describe, it, expect } from 'vitest';
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { ProgressDisplay, formatStepLine } from '../src/progress/ProgressDisplay.js';

const STEPS: ProgressStep[] = [
  { id: 'a', kind: 'model', state: 'a', states: ['a'], lambda: true },
  { id: 'b', kind: 'model', state: 'b', states: ['b', 'b: tool calls?'], lambda: true },
  { id: 'c', kind: 'pure', state: 'c', states: ['c'], lambda: false },
];

let nextId = 0;
const ev = (type: string, extra: Partial<HistoryEvent> = {}, at = 1000): HistoryEvent =>
  ({ id: ++nextId, previousEventId: nextId - 1, type, timestamp: new Date(at), ...extra }) as HistoryEvent;
const entered = (name: string, at: number) =>
  ev(name === 'c' ? 'PassStateEntered' : 'TaskStateEntered', { stateEnteredEventDetails: { name } }, at);
const exited = (name: string, at: number) =>
  ev(name === 'c' ? 'PassStateExited' : 'TaskStateExited', { stateExitedEventDetails: { name } }, at);
const succeeded = (payload: unknown, at: number) =>
  ev(
    'TaskSucceeded',
    { taskSucceededEventDetails: { resource: 'invoke', resourceType: 'lambda', output: JSON.stringify({ Payload: payload }) } },
    at,
  );

describe('Function: computeStepProgress', () => {
  it('derives running, succeeded, reused and pending from the history, with durations and tokens', () => {
    nextId = 0;
    const events = [
      ev('ExecutionStarted', {}, 1000),
      entered('a', 1000),
      ev('TaskScheduled', {}, 1001),
      succeeded({ status: 'reused', output: 1, usage: { inputTokens: 5, outputTokens: 7 } }, 1010),
      exited('a', 1012),
      entered('b', 1020),
      ev('TaskScheduled', {}, 1021),
    ];
    const p = computeStepProgress(STEPS, events, { status: 'RUNNING' }, 1100);
    expect(p.map((s) => [s.id, s.state, s.reused, s.durationMs, s.inputTokens, s.outputTokens])).toEqual([
      ['a', 'succeeded', true, 12, 5, 7],
      ['b', 'running', false, 80, 0, 0],
      ['c', 'pending', false, undefined, 0, 0],
    ]);
  });

  it('marks the step named by the failure failed and the unreached ones skipped when the run ends', () => {
    nextId = 0;
    const events = [
      entered('a', 1000),
      ev('TaskScheduled', {}, 1001),
      succeeded({ output: 1, usage: { inputTokens: 1, outputTokens: 1 } }, 1002),
      exited('a', 1003),
      entered('b', 1004),
      ev('TaskScheduled', {}, 1005),
      ev('TaskFailed', { taskFailedEventDetails: { resourceType: 'lambda', resource: 'invoke', error: 'ToolError', cause: 'boom' } }, 1006),
      ev('ExecutionFailed', { executionFailedEventDetails: { error: 'ToolError', cause: "step 'b' failed: boom" } }, 1007),
    ];
    const p = computeStepProgress(STEPS, events, { status: 'FAILED', error: 'ToolError', cause: "step 'b' failed: boom" }, 2000);
    expect(p.map((s) => [s.id, s.state])).toEqual([
      ['a', 'succeeded'],
      ['b', 'failed'],
      ['c', 'skipped'],
    ]);
    expect(p[1]!.error).toEqual({ error: 'ToolError', cause: 'boom' });
  });

  it('counts a Lambda step that was entered but never called its Lambda as skipped (a false when guard)', () => {
    nextId = 0;
    const events = [entered('a', 1), exited('a', 2), entered('b', 3), exited('b', 4), entered('c', 5), exited('c', 6)];
    const p = computeStepProgress(STEPS, events, { status: 'SUCCEEDED' });
    expect(p.map((s) => s.state)).toEqual(['skipped', 'skipped', 'succeeded']);
  });

  it('counts a step the state machine runs itself (a conditional) as skipped when only its when guard was entered', () => {
    nextId = 0;
    const steps: ProgressStep[] = [
      { id: 'maybe', kind: 'conditional', state: 'maybe', states: ['maybe', 'maybe: when'], lambda: false },
      { id: 'sure', kind: 'conditional', state: 'sure', states: ['sure', 'sure: when'], lambda: false },
    ];
    const choice = (name: string, type: 'Entered' | 'Exited', at: number) =>
      ev(`ChoiceState${type}`, type === 'Entered' ? { stateEnteredEventDetails: { name } } : { stateExitedEventDetails: { name } }, at);
    const pass = (name: string, type: 'Entered' | 'Exited', at: number) =>
      ev(`PassState${type}`, type === 'Entered' ? { stateEnteredEventDetails: { name } } : { stateExitedEventDetails: { name } }, at);
    // `maybe`'s guard said no (straight on to `sure`); `sure`'s said yes and its Pass ran.
    const events = [
      choice('maybe: when', 'Entered', 1),
      choice('maybe: when', 'Exited', 2),
      choice('sure: when', 'Entered', 3),
      choice('sure: when', 'Exited', 4),
      pass('sure', 'Entered', 5),
      pass('sure', 'Exited', 6),
    ];
    const p = computeStepProgress(steps, events, { status: 'SUCCEEDED' });
    expect(p.map((s) => [s.id, s.state])).toEqual([
      ['maybe', 'skipped'],
      ['sure', 'succeeded'],
    ]);
  });
});

describe('Function: computeStepProgress (a when guard that failed)', () => {
  it("fails the step whose guard the engine's error names, with that error, and stops the others", () => {
    nextId = 0;
    const steps: ProgressStep[] = [
      { id: 't', kind: 'function', state: 't', states: ['t'], lambda: true },
      { id: 'u', kind: 'function', state: 'u', states: ['u: when', 'u'], lambda: true },
      { id: 'v', kind: 'function', state: 'v', states: ['v'], lambda: true },
    ];
    const cause =
      'An error occurred while executing the state \'u: when\' (entered at the event id #6). $parse could not parse: {"severity": P1}';
    const events = [
      entered('t', 1000),
      ev('TaskScheduled', {}, 1001),
      succeeded({ output: '{"severity": P1}' }, 1002),
      exited('t', 1003),
      ev('ChoiceStateEntered', { stateEnteredEventDetails: { name: 'u: when' } }, 1004),
      ev('ExecutionFailed', { executionFailedEventDetails: { error: 'States.QueryEvaluationError', cause } }, 1005),
    ];
    const p = computeStepProgress(steps, events, { status: 'FAILED', error: 'States.QueryEvaluationError', cause }, 2000);
    expect(p.map((s) => [s.id, s.state, s.error])).toEqual([
      ['t', 'succeeded', undefined],
      ['u', 'failed', { error: 'States.QueryEvaluationError', cause }],
      ['v', 'skipped', undefined],
    ]);
  });
});

describe('Function: computeStepProgress (a run that ended while steps ran)', () => {
  /** An event with its own id and previous event (the histories of parallel branches interleave). */
  const h = (id: number, previousEventId: number, type: string, at: number, extra: Partial<HistoryEvent> = {}): HistoryEvent =>
    ({ id, previousEventId, type, timestamp: new Date(at), ...extra }) as HistoryEvent;
  const named = (id: number, prev: number, type: string, name: string, at: number) =>
    h(id, prev, type, at, type.endsWith('Entered') ? { stateEnteredEventDetails: { name } } : { stateExitedEventDetails: { name } });
  const GATE: ProgressStep[] = [
    { id: 'notes', kind: 'model', state: 'notes', states: ['notes', 'notes: tool calls?'], lambda: true },
    { id: 'publish', kind: 'tool', state: 'publish', states: ['publish'], lambda: true },
    { id: 'receipt', kind: 'pure', state: 'receipt', states: ['receipt'], lambda: false },
  ];
  // examples/approval-gate.chain.yaml as the engine records it: `publish` waits on its approval's
  // task token until POST /runs/{id}/cancel stops the execution 2 s later.
  const gateUntilWaiting = [
    h(1, 0, 'ExecutionStarted', 1000),
    named(2, 1, 'TaskStateEntered', 'notes', 1000),
    h(3, 2, 'LambdaFunctionScheduled', 1001),
    h(4, 3, 'LambdaFunctionStarted', 1001),
    h(5, 4, 'LambdaFunctionSucceeded', 1010, {
      lambdaFunctionSucceededEventDetails: { output: JSON.stringify({ output: 'n', usage: { inputTokens: 13, outputTokens: 17 } }) },
    }),
    named(6, 5, 'TaskStateExited', 'notes', 1011),
    named(7, 6, 'ChoiceStateEntered', 'notes: tool calls?', 1011),
    named(8, 7, 'ChoiceStateExited', 'notes: tool calls?', 1012),
    named(9, 8, 'TaskStateEntered', 'publish', 1012),
    h(10, 9, 'TaskScheduled', 1012),
    h(11, 10, 'TaskStarted', 1013),
    h(12, 11, 'TaskSubmitted', 1030),
  ];

  it('ends a step stopped mid-wait by a cancel when its state was aborted, with the stop as its error', () => {
    // The reason quotes a failure's wording: a cancel's reason is the user's text, not a failed step.
    const stop = { error: 'Cancelled', cause: "step 'notes' failed, so stop" };
    const events = [
      ...gateUntilWaiting,
      h(13, 12, 'TaskStateAborted', 3012),
      h(14, 13, 'ExecutionAborted', 3013, { executionAbortedEventDetails: stop }),
    ];
    const p = computeStepProgress(GATE, events, { status: 'ABORTED', ...stop, stopDate: new Date(3013) }, 9000);
    expect(p.map((s) => [s.id, s.state, s.startedAt, s.endedAt, s.durationMs, s.error])).toEqual([
      ['notes', 'succeeded', 1000, 1012, 12, undefined],
      ['publish', 'failed', 1012, 3012, 2000, stop],
      ['receipt', 'skipped', undefined, undefined, undefined, undefined],
    ]);
    expect(formatStepLine(p[1]!)).toMatch(/^ {2}✗ publish\s+failed\s+2\.00 s {2}Cancelled: step 'notes' failed, so stop$/);
  });

  it("ends a step of a run stopped while no process ran it when the execution was aborted, with the abort event's error", () => {
    // A dormant execution aborted by `runs cancel`: the engine appends ExecutionAborted to the last checkpoint.
    const events = [
      ...gateUntilWaiting,
      h(13, 12, 'ExecutionAborted', 60_000, { executionAbortedEventDetails: { error: 'Cancelled', cause: 'wrong version' } }),
    ];
    const p = computeStepProgress(GATE, events, { status: 'ABORTED' }, 90_000);
    expect(p[1]).toMatchObject({
      id: 'publish',
      state: 'failed',
      startedAt: 1012,
      endedAt: 60_000,
      durationMs: 58_988,
      error: { error: 'Cancelled', cause: 'wrong version' },
    });
    // Without the event (a history cut short), DescribeExecution's stop date and status.
    const described = computeStepProgress(GATE, gateUntilWaiting, { status: 'TIMED_OUT', stopDate: 5012 }, 90_000);
    expect(described[1]).toMatchObject({ state: 'failed', endedAt: 5012, durationMs: 4000, error: { error: 'TIMED_OUT', cause: '' } });
  });

  it('gives a for_each whose iteration failed its span and the failure, and a branch cut short by it its end and why', () => {
    const steps: ProgressStep[] = [
      { id: 'loop', kind: 'for_each', state: 'loop', states: ['loop'], lambda: false },
      { id: 'body', kind: 'function', state: 'body', parent: 'loop', states: ['body'], lambda: true },
      { id: 'after', kind: 'agent', state: 'after', states: ['after'], lambda: true },
    ];
    const failure = {
      error: 'FunctionError',
      cause: `step 'body' failed: ${JSON.stringify({ errorMessage: 'boom', errorType: 'FunctionError' })}`,
    };
    // `[loop & after]` runs both branches; body's failure is caught into the unowned Fail state
    // `loop: failed`, which fails the Map (MapStateFailed follows the iteration's events), aborts
    // `after` and fails the Parallel.
    const events = [
      h(1, 0, 'ExecutionStarted', 2000),
      named(2, 1, 'PassStateEntered', 'Start', 2000),
      named(3, 2, 'PassStateExited', 'Start', 2001),
      named(4, 3, 'ParallelStateEntered', '[loop & after]', 2001),
      h(5, 4, 'ParallelStateStarted', 2001),
      named(6, 5, 'MapStateEntered', 'loop', 2001),
      named(7, 5, 'TaskStateEntered', 'after', 2002),
      h(8, 7, 'LambdaFunctionScheduled', 2002),
      h(9, 8, 'LambdaFunctionStarted', 2002),
      h(10, 6, 'MapStateStarted', 2004),
      h(11, 10, 'MapIterationStarted', 2004),
      named(12, 11, 'TaskStateEntered', 'body', 2004),
      h(13, 12, 'LambdaFunctionScheduled', 2004),
      h(14, 13, 'LambdaFunctionStarted', 2004),
      h(15, 14, 'LambdaFunctionFailed', 2012, { lambdaFunctionFailedEventDetails: { error: 'FunctionError', cause: 'boom' } }),
      named(16, 15, 'TaskStateExited', 'body', 2013),
      named(17, 16, 'FailStateEntered', 'loop: failed', 2013),
      h(18, 17, 'MapIterationFailed', 2013),
      h(19, 17, 'MapStateFailed', 2014),
      h(20, 9, 'TaskStateAborted', 2015),
      h(21, 19, 'ParallelStateFailed', 2016),
      h(22, 21, 'ExecutionFailed', 2016, { executionFailedEventDetails: failure }),
    ];
    const p = computeStepProgress(steps, events, { status: 'FAILED', ...failure }, 9000);
    expect(p.map((s) => [s.id, s.state, s.startedAt, s.endedAt, s.durationMs, s.error])).toEqual([
      ['loop', 'failed', 2001, 2014, 13, failure],
      ['body', 'failed', 2004, 2013, 9, { error: 'FunctionError', cause: 'boom' }],
      ['after', 'failed', 2002, 2015, 13, { error: 'Aborted', cause: "stopped when step 'body' failed" }],
    ]);
    expect(formatStepLine(p[0]!)).toMatch(/^ {2}✗ loop\s+failed\s+13 ms {2}FunctionError: step 'body' failed: boom$/);
  });

  it('fails a while loop whose body failed before its condition was first evaluated, spanning the body', () => {
    const steps: ProgressStep[] = [
      { id: 'refine', kind: 'while', state: 'refine: again?', states: ['refine: again?'], lambda: false },
      { id: 'improve', kind: 'agent', state: 'improve', parent: 'refine', states: ['improve'], lambda: true },
      { id: 'final', kind: 'agent', state: 'final', states: ['final'], lambda: true },
    ];
    const failure = { error: 'ModelError', cause: "step 'improve' failed: model down" };
    const events = [
      h(1, 0, 'ExecutionStarted', 100),
      named(2, 1, 'TaskStateEntered', 'improve', 101),
      h(3, 2, 'LambdaFunctionScheduled', 101),
      h(4, 3, 'LambdaFunctionFailed', 400, { lambdaFunctionFailedEventDetails: { error: 'ModelError', cause: 'model down' } }),
      named(5, 4, 'TaskStateExited', 'improve', 401),
      named(6, 5, 'FailStateEntered', 'Failed', 401),
      h(7, 6, 'ExecutionFailed', 402, { executionFailedEventDetails: failure }),
    ];
    const p = computeStepProgress(steps, events, { status: 'FAILED', ...failure }, 9000);
    expect(p.map((s) => [s.id, s.state, s.startedAt, s.endedAt, s.error])).toEqual([
      ['refine', 'failed', 101, 401, failure],
      ['improve', 'failed', 101, 401, { error: 'ModelError', cause: 'model down' }],
      ['final', 'skipped', undefined, undefined, undefined],
    ]);
  });
});

describe('Function: computeStepProgress (a step whose call failed, before the run ends)', () => {
  const h = (id: number, previousEventId: number, type: string, at: number, extra: Partial<HistoryEvent> = {}): HistoryEvent =>
    ({ id, previousEventId, type, timestamp: new Date(at), ...extra }) as HistoryEvent;
  const named = (id: number, prev: number, type: string, name: string, at: number) =>
    h(id, prev, type, at, type.endsWith('Entered') ? { stateEnteredEventDetails: { name } } : { stateExitedEventDetails: { name } });
  it('is failed as soon as it leaves its state, never succeeded first, and stays failed when the run ends', () => {
    const steps: ProgressStep[] = [{ id: 'judge', kind: 'model', state: 'judge', states: ['judge'], lambda: true }];
    const cause = "step 'judge' must answer with one of the candidates";
    const failure = { error: 'JudgeChoiceNotCandidate', cause: `step 'judge' failed: ${cause}` };
    const events = [
      h(1, 0, 'ExecutionStarted', 100),
      named(2, 1, 'TaskStateEntered', 'judge', 101),
      h(3, 2, 'LambdaFunctionScheduled', 101),
      h(4, 3, 'LambdaFunctionFailed', 400, { lambdaFunctionFailedEventDetails: { error: 'JudgeChoiceNotCandidate', cause } }),
      named(5, 4, 'TaskStateExited', 'judge', 401),
      named(6, 5, 'FailStateEntered', 'Failed', 401),
    ];
    // Caught into the Fail state, the execution not yet ended.
    const mid = computeStepProgress(steps, events, { status: 'RUNNING' }, 9000);
    expect(mid.map((s) => [s.state, s.error])).toEqual([['failed', { error: 'JudgeChoiceNotCandidate', cause }]]);
    const end = computeStepProgress(
      steps,
      [...events, h(7, 6, 'ExecutionFailed', 402, { executionFailedEventDetails: failure })],
      { status: 'FAILED', ...failure },
      9000,
    );
    expect(end.map((s) => s.state)).toEqual(['failed']);
    let out = '';
    const d = new ProgressDisplay((t) => {
      out += t;
    }, false);
    d.update(mid);
    d.update(end);
    expect(out).not.toContain('succeeded');
    expect(out).toMatch(/^ {2}✗ judge\s+failed/);
  });

  it('is succeeded when a retry succeeded after a failed call', () => {
    const steps: ProgressStep[] = [{ id: 'a', kind: 'model', state: 'a', states: ['a'], lambda: true }];
    const events = [
      h(1, 0, 'ExecutionStarted', 100),
      named(2, 1, 'TaskStateEntered', 'a', 101),
      h(3, 2, 'LambdaFunctionScheduled', 101),
      h(4, 3, 'LambdaFunctionFailed', 200, { lambdaFunctionFailedEventDetails: { error: 'ModelThrottled', cause: 'slow down' } }),
      h(5, 4, 'LambdaFunctionScheduled', 300),
      h(6, 5, 'LambdaFunctionSucceeded', 400, { lambdaFunctionSucceededEventDetails: { output: '{}' } }),
      named(7, 6, 'TaskStateExited', 'a', 401),
    ];
    expect(computeStepProgress(steps, events, { status: 'RUNNING' }, 9000).map((s) => s.state)).toEqual(['succeeded']);
  });
});

describe('Class: ProgressDisplay', () => {
  const progress = (state: 'running' | 'succeeded') =>
    computeStepProgress(
      STEPS.slice(0, 1),
      ((nextId = 0),
      state === 'running' ? [entered('a', 0)] : [entered('a', 0), ev('TaskScheduled', {}, 1), succeeded({ output: 1 }, 2), exited('a', 3)]),
      { status: state === 'running' ? 'RUNNING' : 'SUCCEEDED' },
      10,
    );

  it('redraws the step block in place on a TTY', () => {
    let out = '';
    const d = new ProgressDisplay((t) => {
      out += t;
    }, true);
    d.update(progress('running'));
    d.update(progress('succeeded'));
    const [first, second] = out.split('\x1b[1F\x1b[J');
    expect(first).toMatch(/^ {2}▸ a\s+running\s+10 ms\n$/);
    expect(second).toMatch(/^ {2}✓ a\s+succeeded\s+3 ms\n$/);
  });

  it('prints one plain line per change elsewhere', () => {
    let out = '';
    const d = new ProgressDisplay((t) => {
      out += t;
    }, false);
    d.update(progress('running'));
    d.update(progress('running'));
    d.update(progress('succeeded'));
    expect(out.split('\n').filter(Boolean)).toHaveLength(2);
    expect(out).not.toContain('\x1b[');
  });

  it('labels the steps of a run reused for its idempotency key', () => {
    expect(formatStepLine(progress('succeeded')[0]!, 0, true)).toMatch(/✓ a\s+reused/);
  });
});

describe('Function: readableCause', () => {
  const lambda = JSON.stringify({ errorMessage: 'the function refused', errorType: 'ShoutFailed', requestId: 'r1', stackTrace: ['at x'] });

  it('shows the message of a Lambda error cause, keeping the step prefix', () => {
    expect(readableCause(`step 'second' failed: ${lambda}`)).toBe("step 'second' failed: the function refused");
    expect(readableCause(lambda)).toBe('the function refused');
    // The Node.js runtime's shape, which JavaScript step handlers report.
    const node = JSON.stringify({
      errorType: 'ShoutFailed',
      errorMessage: 'the function refused',
      trace: ['ShoutFailed: the function refused', '    at x'],
    });
    expect(readableCause(`step 'second' failed: ${node}`)).toBe("step 'second' failed: the function refused");
  });

  it('leaves any other cause as it is', () => {
    expect(readableCause("step 'a' exceeded its budget")).toBe("step 'a' exceeded its budget");
    expect(readableCause('step \'a\' failed: {"truncated": ')).toBe('step \'a\' failed: {"truncated": ');
    expect(readableCause('{"no":"message"}')).toBe('{"no":"message"}');
  });
});
