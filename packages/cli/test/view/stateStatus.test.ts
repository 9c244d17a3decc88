import { describe, it, expect } from 'vitest';
import { stateRuns, statusOf, type HistoryEvent } from '../../web/stateStatus.js';

/** A history from [type, details] pairs, each event following the one before. */
function history(...events: [string, Record<string, unknown>?][]): HistoryEvent[] {
  return events.map(([type, details], i) => ({
    id: i + 1,
    previousEventId: i,
    type,
    timestamp: 1000 + i * 10,
    ...(details ? { [`${type[0]!.toLowerCase()}${type.slice(1)}EventDetails`]: details } : {}),
  }));
}

describe('Function: stateRuns', () => {
  it('counts retries and says succeeded when the last call succeeded', () => {
    const runs = stateRuns(
      history(
        ['ExecutionStarted'],
        ['TaskStateEntered', { name: 'a', input: '{"x":1}' }],
        ['LambdaFunctionScheduled'],
        ['LambdaFunctionFailed', { error: 'Boom', cause: 'once' }],
        ['LambdaFunctionScheduled'],
        ['LambdaFunctionSucceeded'],
        ['TaskStateExited', { name: 'a', output: '{"y":2}' }],
      ),
      'RUNNING',
    );
    expect(runs.get('a')).toMatchObject({
      status: 'succeeded',
      retries: 1,
      failures: 1,
      input: '{"x":1}',
      output: '{"y":2}',
      durationMs: 50,
      error: { error: 'Boom', cause: 'once' },
    });
  });

  it('says caught when the state was left after its last call failed, with the error', () => {
    const runs = stateRuns(
      history(
        ['TaskStateEntered', { name: 'a' }],
        ['LambdaFunctionScheduled'],
        ['LambdaFunctionFailed', { error: 'Boom', cause: 'why' }],
        ['TaskStateExited', { name: 'a' }],
        ['FailStateEntered', { name: 'Failed' }],
        ['ExecutionFailed', { error: 'Boom', cause: 'why' }],
      ),
      'FAILED',
    );
    expect(runs.get('a')).toMatchObject({ status: 'caught', error: { error: 'Boom', cause: 'why' } });
    expect(runs.get('Failed')).toMatchObject({ status: 'failed', error: { error: 'Boom', cause: 'why' } });
  });

  it('says waiting while a task waits for its token, and failed when the run ended there', () => {
    const events = history(['TaskStateEntered', { name: 'gate' }], ['TaskScheduled'], ['TaskStarted'], ['TaskSubmitted']);
    expect(stateRuns(events, 'RUNNING').get('gate')?.status).toBe('waiting');
    expect(stateRuns(events, 'ABORTED').get('gate')?.status).toBe('failed');
    expect(stateRuns(history(['TaskStateEntered', { name: 'b' }], ['LambdaFunctionScheduled']), 'RUNNING').get('b')?.status).toBe(
      'running',
    );
  });

  it("counts a Map's iterations", () => {
    const runs = stateRuns(
      history(
        ['MapStateEntered', { name: 'm' }],
        ['MapStateStarted'],
        ['MapIterationStarted', { name: 'm', index: 0 }],
        ['MapIterationStarted', { name: 'm', index: 1 }],
        ['MapIterationSucceeded', { name: 'm', index: 0 }],
      ),
      'RUNNING',
    );
    expect(runs.get('m')).toMatchObject({ status: 'running', iterations: { started: 2, succeeded: 1, failed: 0 } });
  });

  it('says skipped or not reached for a state never entered', () => {
    expect(statusOf('x', new Map(), new Set(['x']))).toBe('skipped');
    expect(statusOf('x', new Map(), new Set())).toBe('notreached');
  });
});
