import { describe, expect, it } from 'vitest';
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { historyStepOutputs, stepOutputVariable } from '../src/runs/historyStepOutputs.js';

const exit = (name: string, assignedVariables?: Record<string, string>): HistoryEvent =>
  ({
    type: 'PassStateExited',
    stateExitedEventDetails: { name, output: '{}', ...(assignedVariables ? { assignedVariables } : {}) },
  }) as HistoryEvent;

describe('Function: historyStepOutputs', () => {
  it("reads the last value a step's own states assigned to its variable, for the steps without a Lambda", () => {
    const steps = [
      { id: 'pick', kind: 'conditional', state: 'pick', states: ['pick', 'pick: output'], lambda: false },
      { id: 'go-on', kind: 'while', state: 'go-on: again?', states: ['go-on: again?'], lambda: false },
      { id: 'ask', kind: 'agent', state: 'ask', states: ['ask'], lambda: true },
    ];
    const outputs = historyStepOutputs(steps, [
      exit('pick', { s_pick: 'true' }),
      exit('ask', { s_ask: '"an answer"' }),
      exit('go-on: again?', { s_go_on_iteration: '1' }),
      exit('pick: output', { s_pick: '"the branch"' }),
      exit('go-on: again?', { s_go_on: '{"n":2}' }),
      exit('elsewhere', { s_pick: '"not its state"' }),
    ]);
    expect([...outputs]).toEqual([
      ['pick', 'the branch'],
      ['go-on', { n: 2 }],
    ]);
  });

  it('names the variable as the compiler does: s_ and the id made identifier-safe, at most 80 characters', () => {
    expect(stepOutputVariable('go-on')).toBe('s_go_on');
    expect(stepOutputVariable('a.then')).toBe('s_a_then');
    expect(stepOutputVariable('x'.repeat(90))).toBe(`s_${'x'.repeat(78)}`);
  });
});
