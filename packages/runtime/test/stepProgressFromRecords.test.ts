import { describe, expect, it } from 'vitest';
import { answerRecord, baseStepId, recordsByStep, stepProgressFromRecords } from '../src/runs/stepProgressFromRecords.js';
import type { StepRecord as StepRecordView } from '../src/persistence/RunStore.js';
import type { ProgressStep } from '../src/runs/StepProgress.js';

const step = (id: string, lambda: boolean, parent?: string): ProgressStep => ({
  id,
  kind: lambda ? 'model' : 'for_each',
  state: id,
  states: [id],
  lambda,
  ...(parent ? { parent } : {}),
});
const STEPS = [step('plan', true), step('each', false), step('review', true, 'each'), step('judge', true)];
const rec = (
  stepId: string,
  status: StepRecordView['status'],
  startedAt: string,
  endedAt?: string,
  extra: Partial<StepRecordView> = {},
): StepRecordView => ({ runId: 'r', stepId, status, attempts: 1, startedAt, ...(endedAt ? { endedAt } : {}), ...extra }) as StepRecordView;
const t = (ms: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, ms)).toISOString();

describe('Function: stepProgressFromRecords', () => {
  it("gives the steps of an ended run the states, spans and tokens of their records; a group takes its nested steps'", () => {
    const records = [
      rec('plan', 'SUCCEEDED', t(0), t(40), { usage: { inputTokens: 10, outputTokens: 20 } }),
      rec('review[0]', 'SUCCEEDED', t(50), t(80), { usage: { inputTokens: 1, outputTokens: 2 } }),
      rec('review[1]', 'SUCCEEDED', t(55), t(95), { usage: { inputTokens: 3, outputTokens: 4 } }),
    ];
    const p = stepProgressFromRecords(STEPS, records, 'SUCCEEDED');
    expect(p.map((s) => [s.id, s.state, s.durationMs, s.inputTokens, s.outputTokens, s.calls])).toEqual([
      ['plan', 'succeeded', 40, 10, 20, 1],
      ['each', 'succeeded', 45, 0, 0, 0],
      ['review', 'succeeded', 45, 4, 6, 2],
      ['judge', 'skipped', undefined, 0, 0, 0],
    ]);
    expect(p[2]).toMatchObject({ parent: 'each', reused: false, startedAt: Date.parse(t(50)), endedAt: Date.parse(t(95)) });
  });

  it('fails a step with a failed instance (with its error), and its group', () => {
    const records = [
      rec('plan', 'SUCCEEDED', t(0), t(40)),
      rec('review[0]', 'SUCCEEDED', t(50), t(80)),
      rec('review[1]', 'FAILED', t(50), t(90), { error: { name: 'ModelError', message: 'no answer' } }),
    ];
    const p = stepProgressFromRecords(STEPS, records, 'FAILED');
    expect(p.map((s) => s.state)).toEqual(['succeeded', 'failed', 'failed', 'skipped']);
    expect(p[2]!.error).toEqual({ error: 'ModelError', cause: 'no answer' });
  });

  it('shows a step still running while the run is, and failed once the run ended under it', () => {
    const records = [rec('plan', 'RUNNING', t(0))];
    const live = stepProgressFromRecords(STEPS, records, 'RUNNING');
    expect(live.map((s) => s.state)).toEqual(['running', 'pending', 'pending', 'pending']);
    expect(live[0]).toMatchObject({ startedAt: Date.parse(t(0)) });
    expect(live[0]!.endedAt).toBeUndefined();
    expect(stepProgressFromRecords(STEPS, records, 'ABORTED').map((s) => s.state)).toEqual(['failed', 'skipped', 'skipped', 'skipped']);
  });
});

describe('Function: recordsByStep', () => {
  it('groups step instances under their step', () => {
    expect(baseStepId('review[2]:generator#turn1')).toBe('review');
    const grouped = recordsByStep([{ stepId: 'a' }, { stepId: 'b[0]' }, { stepId: 'b[1]:x#t2' }]);
    expect([...grouped].map(([k, v]) => [k, v.length])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
  });
});

describe('Function: answerRecord', () => {
  it('is the last reason turn of an agent loop, by turn number, never a tool call', () => {
    const recs = ['s:reason#turn0', 's:reason#turn10', 's:reason#turn2', 's:tool#c1', 's:tool#c9'].map((stepId) => ({ stepId }));
    expect(answerRecord(recs)?.stepId).toBe('s:reason#turn10');
  });

  it('is the last record as listed for any other step', () => {
    expect(answerRecord([{ stepId: 'p:skeptic' }, { stepId: 'p:aggregator' }])?.stepId).toBe('p:aggregator');
    expect(answerRecord([{ stepId: 'one' }])?.stepId).toBe('one');
    expect(answerRecord([])).toBeUndefined();
  });
});
