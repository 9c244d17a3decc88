// The JSON shapes of runs, shared by `runs list/show --json` and the HTTP API (embedded and on AWS).
import type { RunRecord as RunRecordView } from '../persistence/RunStore.js';
import type { RunDetails } from './RunService.js';
import type { StepProgress } from './StepProgress.js';
import { shownExecutionArn } from './runExecutionArn.js';
import { recordsByStep } from './stepProgressFromRecords.js';

/** `text` on one line, cut to `max` characters (an ellipsis marks the cut). */
export function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** One run in a list. */
export function runSummary(r: RunRecordView) {
  return {
    runId: r.runId,
    workflow: r.workflow,
    displayName: r.workflowDisplayName ?? r.workflow,
    status: r.status,
    startedAt: r.startedAt,
    endedAt: r.endedAt ?? null,
    idempotencyKey: r.idempotencyKey ?? null,
    parentRunId: r.parentRunId ?? null,
  };
}

const OUTPUT_CHARS = 200;

function preview(v: unknown): string {
  return truncate(typeof v === 'string' ? v : JSON.stringify(v ?? null), OUTPUT_CHARS);
}

/**
 * What `runs show` gives as the output of a step with no records (a conditional, a loop, a Contenox
 * noop or route): the value its states assigned (see historyStepOutputs), once it succeeded, as
 * `{output}` (a truncated preview, as the records' are); `{}` for any other step.
 */
export function recordlessOutput(d: RunDetails, step: StepProgress, records: number): { output?: string } {
  return records === 0 && step.state === 'succeeded' && d.outputs?.has(step.id) ? { output: preview(d.outputs.get(step.id)) } : {};
}

/** `runs show --json`: the run, then each step with its status, timing, tokens, truncated output and error. */
export function runDetailsJson(d: RunDetails) {
  const byStep = recordsByStep(d.records);
  return {
    run: {
      ...runSummary(d.run),
      input: d.run.input ?? null,
      output: d.run.output ?? null,
      error: d.run.error ?? null,
      executionArn: shownExecutionArn(d.run) ?? null,
    },
    steps: d.steps.map((s) => ({
      id: s.id,
      kind: s.kind,
      parent: s.parent ?? null,
      status: s.state,
      reused: s.reused,
      startedAt: s.startedAt !== undefined ? new Date(s.startedAt).toISOString() : null,
      endedAt: s.endedAt !== undefined ? new Date(s.endedAt).toISOString() : null,
      durationMs: s.durationMs ?? null,
      tokens: { input: s.inputTokens, output: s.outputTokens },
      error: s.error ?? null,
      ...recordlessOutput(d, s, byStep.get(s.id)?.length ?? 0),
      records: (byStep.get(s.id) ?? []).map((r) => ({
        stepId: r.stepId,
        status: r.status,
        attempts: r.attempts,
        startedAt: r.startedAt,
        endedAt: r.endedAt ?? null,
        output: r.output !== undefined ? preview(r.output) : null,
        outputRef: r.outputRef ?? null,
        error: r.error ?? null,
      })),
    })),
    historyEvents: d.history.length,
    events: d.events.map((e) => ({ at: e.at, type: e.type, stepId: e.stepId ?? null, detail: e.detail ?? null })),
  };
}
