import type { HistoryEvent } from '@aws-sdk/client-sfn';
import type { CatalogStep } from '../stack/WorkflowCatalog.js';

/** What a step is doing, as the progress display and `runs show` print it. */
export type StepState = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';

/** One step's progress, derived from the execution history. */
export interface StepProgress {
  readonly id: string;
  readonly kind: string;
  readonly parent?: string;
  readonly state: StepState;
  /** Every Lambda call of the step returned a stored result (idempotency / fork reuse). */
  readonly reused: boolean;
  readonly startedAt?: number;
  readonly endedAt?: number;
  readonly durationMs?: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Lambda calls the step made (agent turns and tool calls count separately). */
  readonly calls: number;
  readonly error?: { readonly error: string; readonly cause: string };
}

/** The step list progress is computed over: the workflow catalog's steps. */
export type ProgressStep = CatalogStep;

interface Acc {
  entered: number;
  exited: number;
  first?: number;
  last?: number;
  tasks: number;
  reusedTasks: number;
  inTok: number;
  outTok: number;
  error?: { error: string; cause: string };
}

const NAME_DETAILS = ['stateEnteredEventDetails', 'stateExitedEventDetails'] as const;

/**
 * Folds an execution history into per-step progress. Events that name a state are attributed to
 * the step owning that state (the manifest lists every helper state of a step); unnamed events
 * (task scheduled/succeeded/failed, map iterations) inherit the step of the event they follow
 * (`previousEventId`). A step is running while it has entered more states than it has left.
 */
export function computeStepProgress(
  steps: readonly ProgressStep[],
  events: readonly HistoryEvent[],
  execution: { status?: string; error?: string; cause?: string },
  now: number = Date.now(),
): StepProgress[] {
  const owner = new Map<string, string>();
  for (const s of steps) for (const st of s.states) if (!owner.has(st)) owner.set(st, s.id);
  const accs = new Map<string, Acc>(steps.map((s) => [s.id, { entered: 0, exited: 0, tasks: 0, reusedTasks: 0, inTok: 0, outTok: 0 }]));
  const stepOfEvent = new Map<number, string | undefined>();
  for (const e of events) {
    const id = e.id ?? 0;
    let name: string | undefined;
    for (const k of NAME_DETAILS) name ??= e[k]?.name;
    const step = name !== undefined ? owner.get(name) : stepOfEvent.get(e.previousEventId ?? -1);
    stepOfEvent.set(id, step);
    if (step === undefined) continue;
    const acc = accs.get(step)!;
    const t = e.timestamp instanceof Date ? e.timestamp.getTime() : Number(e.timestamp ?? now);
    if (e.type?.endsWith('StateEntered')) {
      acc.entered++;
      acc.first ??= t;
    } else if (e.type?.endsWith('StateExited')) {
      acc.exited++;
      acc.last = t;
    } else if (e.type === 'TaskSucceeded' || e.type === 'LambdaFunctionSucceeded') {
      acc.tasks++;
      const payload = payloadOf(e.taskSucceededEventDetails?.output ?? e.lambdaFunctionSucceededEventDetails?.output);
      const usage = (payload?.usage ?? {}) as { inputTokens?: unknown; outputTokens?: unknown };
      acc.inTok += Number(usage.inputTokens ?? 0) || 0;
      acc.outTok += Number(usage.outputTokens ?? 0) || 0;
      if (payload?.status === 'reused') acc.reusedTasks++;
    } else if (e.type === 'TaskFailed' || e.type === 'TaskTimedOut' || e.type === 'LambdaFunctionFailed' || e.type === 'LambdaFunctionTimedOut') {
      // Plain steps are function-ARN Tasks (LambdaFunction* events); tool calls use lambda:invoke (Task* events).
      const d = e.taskFailedEventDetails ?? e.taskTimedOutEventDetails ?? e.lambdaFunctionFailedEventDetails ?? e.lambdaFunctionTimedOutEventDetails;
      acc.error = { error: d?.error ?? 'States.TaskFailed', cause: d?.cause ?? '' };
    }
  }
  const ended = execution.status !== undefined && execution.status !== 'RUNNING' && execution.status !== 'PENDING_REDRIVE';
  const failedStep = /step '([^']+)' failed/.exec(execution.cause ?? '')?.[1];
  return steps.map((s) => {
    const a = accs.get(s.id)!;
    let state: StepState;
    if (a.entered === 0) state = ended ? 'skipped' : 'pending';
    else if (s.id === failedStep || (ended && execution.status !== 'SUCCEEDED' && a.entered > a.exited)) state = 'failed';
    else if (a.entered > a.exited && !ended) state = 'running';
    else if (s.lambda && a.tasks === 0 && a.error === undefined) state = 'skipped';
    else state = 'succeeded';
    const endedAt = state === 'running' ? undefined : a.last ?? (state === 'failed' ? a.first : undefined);
    const error = state === 'failed'
      ? a.error ?? (s.id === failedStep ? { error: execution.error ?? 'States.TaskFailed', cause: execution.cause ?? '' } : undefined)
      : undefined;
    return {
      id: s.id,
      kind: s.kind,
      ...(s.parent !== undefined ? { parent: s.parent } : {}),
      state,
      reused: a.tasks > 0 && a.reusedTasks === a.tasks,
      ...(a.first !== undefined ? { startedAt: a.first } : {}),
      ...(endedAt !== undefined ? { endedAt } : {}),
      ...(a.first !== undefined ? { durationMs: Math.max(0, (endedAt ?? now) - a.first) } : {}),
      inputTokens: a.inTok,
      outputTokens: a.outTok,
      calls: a.tasks,
      ...(error ? { error } : {}),
    };
  });
}

function payloadOf(output: string | undefined): Record<string, unknown> | undefined {
  if (!output) return undefined;
  try {
    const v = JSON.parse(output) as Record<string, unknown>;
    const p = v && typeof v === 'object' && 'Payload' in v ? v.Payload : v;
    return p && typeof p === 'object' ? (p as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
