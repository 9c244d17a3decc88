import type { StepRecord as StepRecordView } from '../persistence/RunStore.js';
import type { ProgressStep, StepProgress, StepState } from './StepProgress.js';

/** The step id of a step instance id (`review[2]:generator#turn1` → `review`). */
export function baseStepId(instance: string): string {
  const m = /^[^[:#]+/.exec(instance);
  return m ? m[0] : instance;
}

/** Step records by the workflow step they belong to (its instances: loop iterations, agent turns, tool calls). */
export function recordsByStep<R extends { readonly stepId: string }>(records: readonly R[]): Map<string, R[]> {
  const byStep = new Map<string, R[]>();
  for (const r of records) {
    const base = baseStepId(r.stepId);
    const list = byStep.get(base);
    if (list) list.push(r);
    else byStep.set(base, [r]);
  }
  return byStep;
}

/**
 * The instance record that holds a step's answer. For an agent loop it is the last reason turn
 * (`step:reason#turnN`, by N): its tool calls (`step:tool…`) hold tool results, and sort after the
 * turns. Otherwise the last record, as listed.
 */
export function answerRecord<R extends { readonly stepId: string }>(records: readonly R[]): R | undefined {
  let answer: R | undefined;
  let turn = -1;
  for (const r of records) {
    const m = /:reason#turn(\d+)$/.exec(r.stepId);
    if (m && Number(m[1]) > turn) {
      turn = Number(m[1]);
      answer = r;
    }
  }
  return answer ?? records.at(-1);
}

/** The model tokens step records used, summed (records without usage count none). */
export function tokensOf(records: readonly Pick<StepRecordView, 'usage'>[]): { inputTokens: number; outputTokens: number } {
  let inputTokens = 0;
  let outputTokens = 0;
  for (const r of records) {
    const u = r.usage as { inputTokens?: unknown; outputTokens?: unknown } | undefined;
    if (typeof u?.inputTokens === 'number') inputTokens += u.inputTokens;
    if (typeof u?.outputTokens === 'number') outputTokens += u.outputTokens;
  }
  return { inputTokens, outputTokens };
}

/**
 * Per-step progress from the step records in DynamoDB, for a run whose execution history is gone:
 * dropped after the retention period (docs/embedded.md, Retention), or unreadable. A step with no
 * record did not run (skipped once the run has ended); one with a FAILED instance failed; one with
 * an instance still RUNNING is running while the run is, and failed when the run ended under it;
 * otherwise it succeeded. Times span its instances, tokens add up theirs, and each instance counts
 * as a call. Reuse is not recorded on step records, so `reused` is false. A step that reaches no
 * Lambda has no records of its own (a conditional, a loop, a parallel group): it takes the state
 * and span of the steps nested in it.
 */
export function stepProgressFromRecords(
  steps: readonly ProgressStep[],
  records: readonly StepRecordView[],
  runStatus: string,
): StepProgress[] {
  const byStep = recordsByStep(records);
  const running = runStatus === 'RUNNING';
  const own = steps.map((s): StepProgress => {
    const recs = byStep.get(s.id) ?? [];
    const failed = recs.find((r) => r.status === 'FAILED');
    let state: StepState;
    if (recs.length === 0) state = running ? 'pending' : 'skipped';
    else if (failed) state = 'failed';
    else if (recs.some((r) => r.status === 'RUNNING')) state = running ? 'running' : 'failed';
    else state = 'succeeded';
    const starts = recs.map((r) => Date.parse(r.startedAt)).filter(Number.isFinite);
    const ends = recs.map((r) => (r.endedAt !== undefined ? Date.parse(r.endedAt) : NaN)).filter(Number.isFinite);
    const { inputTokens, outputTokens } = tokensOf(recs);
    return {
      id: s.id,
      kind: s.kind,
      ...(s.parent !== undefined ? { parent: s.parent } : {}),
      state,
      reused: false,
      ...spanOf(starts, ends, state),
      inputTokens,
      outputTokens,
      calls: recs.length,
      ...(failed?.error ? { error: { error: failed.error.name, cause: failed.error.message } } : {}),
    };
  });
  // Bottom-up, so a group nested in a group is settled before its parent reads it.
  const byId = new Map<string, StepProgress>(own.map((p) => [p.id, p]));
  for (let i = steps.length - 1; i >= 0; i--) {
    const s = steps[i]!;
    if (s.lambda) continue;
    const nested = steps.filter((c) => c.parent === s.id).map((c) => byId.get(c.id)!);
    byId.set(s.id, { ...byId.get(s.id)!, ...groupOf(nested, running) });
  }
  return steps.map((s) => byId.get(s.id)!);
}

/** The state and span of a step with no records of its own, from the steps nested in it. */
function groupOf(nested: readonly StepProgress[], running: boolean): Pick<StepProgress, 'state'> & Partial<StepProgress> {
  const has = (state: StepState) => nested.some((n) => n.state === state);
  const state: StepState = has('failed')
    ? 'failed'
    : has('running')
      ? 'running'
      : has('succeeded')
        ? 'succeeded'
        : running
          ? 'pending'
          : 'skipped';
  const starts = nested.flatMap((n) => (n.startedAt !== undefined ? [n.startedAt] : []));
  const ends = nested.flatMap((n) => (n.endedAt !== undefined ? [n.endedAt] : []));
  return { state, ...spanOf(starts, ends, state) };
}

/** From the earliest start to the latest end (no end while the step is still running). */
function spanOf(
  starts: readonly number[],
  ends: readonly number[],
  state: StepState,
): Pick<StepProgress, 'startedAt' | 'endedAt' | 'durationMs'> {
  const startedAt = starts.length > 0 ? Math.min(...starts) : undefined;
  const endedAt = ends.length > 0 && state !== 'running' ? Math.max(...ends) : undefined;
  return {
    ...(startedAt !== undefined ? { startedAt } : {}),
    ...(endedAt !== undefined ? { endedAt } : {}),
    ...(startedAt !== undefined && endedAt !== undefined ? { durationMs: endedAt - startedAt } : {}),
  };
}
