import { readableCause } from '../src/progress/readableCause.js';
import { describe, it, expect } from 'vitest';
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { computeStepProgress, type ProgressStep } from '../src/progress/StepProgress.js';
import { ProgressDisplay, formatStepLine } from '../src/progress/ProgressDisplay.js';

const STEPS: ProgressStep[] = [
  { id: 'a', kind: 'model', state: 'a', states: ['a'], lambda: true },
  { id: 'b', kind: 'model', state: 'b', states: ['b', 'b: tool calls?'], lambda: true },
  { id: 'c', kind: 'pure', state: 'c', states: ['c'], lambda: false },
];

let nextId = 0;
const ev = (type: string, extra: Partial<HistoryEvent> = {}, at = 1000): HistoryEvent =>
  ({ id: ++nextId, previousEventId: nextId - 1, type, timestamp: new Date(at), ...extra }) as HistoryEvent;
const entered = (name: string, at: number) => ev(name === 'c' ? 'PassStateEntered' : 'TaskStateEntered', { stateEnteredEventDetails: { name } }, at);
const exited = (name: string, at: number) => ev(name === 'c' ? 'PassStateExited' : 'TaskStateExited', { stateExitedEventDetails: { name } }, at);
const succeeded = (payload: unknown, at: number) => ev('TaskSucceeded', { taskSucceededEventDetails: { resource: 'invoke', resourceType: 'lambda', output: JSON.stringify({ Payload: payload }) } }, at);

describe('Function: computeStepProgress', () => {
  it('derives running, succeeded, reused and pending from the history, with durations and tokens', () => {
    nextId = 0;
    const events = [
      ev('ExecutionStarted', {}, 1000),
      entered('a', 1000), ev('TaskScheduled', {}, 1001), succeeded({ status: 'reused', output: 1, usage: { inputTokens: 5, outputTokens: 7 } }, 1010), exited('a', 1012),
      entered('b', 1020), ev('TaskScheduled', {}, 1021),
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
      entered('a', 1000), ev('TaskScheduled', {}, 1001), succeeded({ output: 1, usage: { inputTokens: 1, outputTokens: 1 } }, 1002), exited('a', 1003),
      entered('b', 1004), ev('TaskScheduled', {}, 1005),
      ev('TaskFailed', { taskFailedEventDetails: { resourceType: 'lambda', resource: 'invoke', error: 'ToolError', cause: 'boom' } }, 1006),
      ev('ExecutionFailed', { executionFailedEventDetails: { error: 'ToolError', cause: "step 'b' failed: boom" } }, 1007),
    ];
    const p = computeStepProgress(STEPS, events, { status: 'FAILED', error: 'ToolError', cause: "step 'b' failed: boom" }, 2000);
    expect(p.map((s) => [s.id, s.state])).toEqual([['a', 'succeeded'], ['b', 'failed'], ['c', 'skipped']]);
    expect(p[1]!.error).toEqual({ error: 'ToolError', cause: 'boom' });
  });

  it('counts a Lambda step that was entered but never called its Lambda as skipped (a false when guard)', () => {
    nextId = 0;
    const events = [entered('a', 1), exited('a', 2), entered('b', 3), exited('b', 4), entered('c', 5), exited('c', 6)];
    const p = computeStepProgress(STEPS, events, { status: 'SUCCEEDED' });
    expect(p.map((s) => s.state)).toEqual(['skipped', 'skipped', 'succeeded']);
  });
});

describe('Class: ProgressDisplay', () => {
  const progress = (state: 'running' | 'succeeded') => computeStepProgress(
    STEPS.slice(0, 1),
    (nextId = 0, state === 'running' ? [entered('a', 0)] : [entered('a', 0), ev('TaskScheduled', {}, 1), succeeded({ output: 1 }, 2), exited('a', 3)]),
    { status: state === 'running' ? 'RUNNING' : 'SUCCEEDED' },
    10,
  );

  it('redraws the step block in place on a TTY', () => {
    let out = '';
    const d = new ProgressDisplay((t) => { out += t; }, true);
    d.update(progress('running'));
    d.update(progress('succeeded'));
    const [first, second] = out.split('\x1b[1F\x1b[J');
    expect(first).toMatch(/^ {2}▸ a\s+running\s+10 ms\n$/);
    expect(second).toMatch(/^ {2}✓ a\s+succeeded\s+3 ms\n$/);
  });

  it('prints one plain line per change elsewhere', () => {
    let out = '';
    const d = new ProgressDisplay((t) => { out += t; }, false);
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
  });

  it('leaves any other cause as it is', () => {
    expect(readableCause("step 'a' exceeded its budget")).toBe("step 'a' exceeded its budget");
    expect(readableCause('step \'a\' failed: {"truncated": ')).toBe('step \'a\' failed: {"truncated": ');
    expect(readableCause('{"no":"message"}')).toBe('{"no":"message"}');
  });
});
