import type { HistoryEvent } from '@aws-sdk/client-sfn';
import type { CatalogStep } from './ports.js';

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
  /** States entered other than the step's `when` guard: none when the guard skipped the step. */
  enteredBody: number;
  tasks: number;
  reusedTasks: number;
  inTok: number;
  outTok: number;
  error?: { error: string; cause: string };
  /** The step's last Lambda call failed (and none succeeded after it, as a retry would). */
  lastFailed?: boolean;
  /** Map and Parallel states of the step entered and not yet ended, by type. */
  open: Record<'Map' | 'Parallel', number>;
  /** When a state of the step last ended without exiting: aborted (a stop, a failing sibling branch), or a Map/Parallel that failed. */
  cutAt?: number;
}

const NAME_DETAILS = ['stateEnteredEventDetails', 'stateExitedEventDetails'] as const;

/** A Map or Parallel state ending without an exit, by the type it ends. These events name no state and may follow an event of a nested step. */
const CONTAINER_ENDS = new Map<string, 'Map' | 'Parallel'>([
  ['MapStateFailed', 'Map'],
  ['MapStateAborted', 'Map'],
  ['ParallelStateFailed', 'Parallel'],
  ['ParallelStateAborted', 'Parallel'],
]);
/** A Map or Parallel state entered or exited (these name the state). */
const CONTAINER_OF = new Map<string, 'Map' | 'Parallel'>([
  ['MapStateEntered', 'Map'],
  ['MapStateExited', 'Map'],
  ['ParallelStateEntered', 'Parallel'],
  ['ParallelStateExited', 'Parallel'],
]);
const EXECUTION_ENDS = new Set(['ExecutionSucceeded', 'ExecutionFailed', 'ExecutionAborted', 'ExecutionTimedOut']);

/** The execution as DescribeExecution tells it (status, the failure or the stop's error and cause, when it ended). */
export interface ProgressExecution {
  readonly status?: string;
  readonly error?: string;
  readonly cause?: string;
  readonly stopDate?: Date | number;
}

const timeOf = (e: HistoryEvent, now: number) => (e.timestamp instanceof Date ? e.timestamp.getTime() : Number(e.timestamp ?? now));

/**
 * Folds an execution history into per-step progress. Events that name a state are attributed to
 * the step owning that state (the manifest lists every helper state of a step); unnamed events
 * (task scheduled/succeeded/failed, map iterations) inherit the step of the event they follow
 * (`previousEventId`), except a Map or Parallel state's failure or abort, which goes to the step
 * whose Map/Parallel it ends (the nearest one open, from the step of the events before it up
 * through its parents). A step is running while it has entered more states than it has left.
 *
 * Once the execution has ended unsuccessfully, a step that had not left its state (a task stopped
 * mid-wait by a cancel, a Map whose iteration failed, a branch cut short by its sibling's failure)
 * is failed: it ends when its state was aborted or failed, else when the execution ended, and its
 * error is its own task's failure, else the run's failure when the step or one nested in it is the
 * one that failed, else the execution's stop (`Cancelled` and the reason, `States.Timeout`), else
 * `Aborted` (a branch stopped because another failed). A step with nested steps spans them (a
 * while loop's own state is evaluated after its body), and fails with them.
 */
export function computeStepProgress(
  steps: readonly ProgressStep[],
  events: readonly HistoryEvent[],
  execution: ProgressExecution,
  now: number = Date.now(),
): StepProgress[] {
  const owner = new Map<string, string>();
  for (const s of steps) for (const st of s.states) if (!owner.has(st)) owner.set(st, s.id);
  const parentOf = new Map(steps.map((s) => [s.id, s.parent]));
  // A step's `when` guard is its helper Choice named `<its state>: when` (lowering's helper-state names).
  const guardOf = new Map<string, string>();
  for (const s of steps) {
    const guard = s.states.find((st) => st !== s.state && /: when( \d+)?$/.test(st));
    if (guard !== undefined) guardOf.set(s.id, guard);
  }
  const accs = new Map<string, Acc>(
    steps.map((s) => [
      s.id,
      { entered: 0, exited: 0, enteredBody: 0, tasks: 0, reusedTasks: 0, inTok: 0, outTok: 0, open: { Map: 0, Parallel: 0 } },
    ]),
  );
  const stepOfEvent = new Map<number, string | undefined>();
  const previousOf = new Map<number, number | undefined>();
  /** The step of the nearest event before this one that has a step. */
  const stepBefore = (previousEventId: number | undefined): string | undefined => {
    for (let id = previousEventId, hops = 0; id !== undefined && hops < events.length; id = previousOf.get(id), hops++) {
      const step = stepOfEvent.get(id);
      if (step !== undefined) return step;
    }
    return undefined;
  };
  let endEvent: HistoryEvent | undefined;
  for (const e of events) {
    const id = e.id ?? 0;
    previousOf.set(id, e.previousEventId);
    if (e.type !== undefined && EXECUTION_ENDS.has(e.type)) endEvent = e;
    let name: string | undefined;
    for (const k of NAME_DETAILS) name ??= e[k]?.name;
    let step = name !== undefined ? owner.get(name) : stepOfEvent.get(e.previousEventId ?? -1);
    const containerEnd = e.type !== undefined ? CONTAINER_ENDS.get(e.type) : undefined;
    if (containerEnd !== undefined) {
      step = stepBefore(e.previousEventId);
      while (step !== undefined && accs.get(step)!.open[containerEnd] === 0) step = parentOf.get(step);
    }
    stepOfEvent.set(id, step);
    if (step === undefined) continue;
    const acc = accs.get(step)!;
    const t = timeOf(e, now);
    if (e.type?.endsWith('StateEntered')) {
      acc.entered++;
      if (name !== guardOf.get(step)) acc.enteredBody++;
      acc.first ??= t;
      const container = CONTAINER_OF.get(e.type);
      if (container !== undefined) acc.open[container]++;
    } else if (e.type?.endsWith('StateExited')) {
      acc.exited++;
      acc.last = t;
      const container = CONTAINER_OF.get(e.type);
      if (container !== undefined && acc.open[container] > 0) acc.open[container]--;
    } else if (containerEnd !== undefined) {
      acc.open[containerEnd]--;
      acc.cutAt = t;
    } else if (e.type?.endsWith('StateAborted')) {
      acc.cutAt = t;
    } else if (e.type === 'TaskSucceeded' || e.type === 'LambdaFunctionSucceeded') {
      acc.tasks++;
      acc.lastFailed = false;
      const payload = payloadOf(e.taskSucceededEventDetails?.output ?? e.lambdaFunctionSucceededEventDetails?.output);
      const usage = (payload?.usage ?? {}) as { inputTokens?: unknown; outputTokens?: unknown };
      acc.inTok += Number(usage.inputTokens ?? 0) || 0;
      acc.outTok += Number(usage.outputTokens ?? 0) || 0;
      if (payload?.status === 'reused') acc.reusedTasks++;
    } else if (
      e.type === 'TaskFailed' ||
      e.type === 'TaskTimedOut' ||
      e.type === 'LambdaFunctionFailed' ||
      e.type === 'LambdaFunctionTimedOut'
    ) {
      // Plain steps are function-ARN Tasks (LambdaFunction* events); tool calls use lambda:invoke (Task* events).
      const d =
        e.taskFailedEventDetails ??
        e.taskTimedOutEventDetails ??
        e.lambdaFunctionFailedEventDetails ??
        e.lambdaFunctionTimedOutEventDetails;
      acc.error = { error: d?.error ?? 'States.TaskFailed', cause: d?.cause ?? '' };
      acc.lastFailed = true;
    }
  }
  const ended = execution.status !== undefined && execution.status !== 'RUNNING' && execution.status !== 'PENDING_REDRIVE';
  // What the execution ended with, from DescribeExecution or else its last event.
  const endDetails =
    endEvent?.executionFailedEventDetails ?? endEvent?.executionAbortedEventDetails ?? endEvent?.executionTimedOutEventDetails;
  const endError = execution.error ?? endDetails?.error;
  const endCause = execution.cause ?? endDetails?.cause;
  const stopDate = execution.stopDate instanceof Date ? execution.stopDate.getTime() : execution.stopDate;
  const executionEndedAt = endEvent !== undefined ? timeOf(endEvent, now) : stopDate;
  // Only a failure's cause names the step that failed (a cancel's reason is the user's text).
  const failedStep = execution.status === 'FAILED' ? failedStepOf(endCause ?? '', owner) : undefined;
  const onFailedPath = new Set<string>();
  for (let id = failedStep; id !== undefined && !onFailedPath.has(id); id = parentOf.get(id)) onFailedPath.add(id);
  const stoppedError = (id: string): { error: string; cause: string } => {
    if (onFailedPath.has(id)) return { error: endError ?? 'States.TaskFailed', cause: endCause ?? '' };
    if (execution.status === 'ABORTED' || execution.status === 'TIMED_OUT')
      return { error: endError ?? execution.status, cause: endCause ?? '' };
    return {
      error: 'Aborted',
      cause: failedStep !== undefined ? `stopped when step '${failedStep}' failed` : 'stopped when the run failed',
    };
  };

  interface Own {
    state: StepState;
    first?: number;
    endedAt?: number;
  }
  const own = new Map<string, Own>();
  for (const s of steps) {
    const a = accs.get(s.id)!;
    const open = a.entered > a.exited;
    let state: StepState;
    if (a.entered === 0) state = ended ? 'skipped' : 'pending';
    else if (s.id === failedStep || (ended && execution.status !== 'SUCCEEDED' && open)) state = 'failed';
    else if (open && !ended) state = 'running';
    // Its call failed and the step was left (to a Catch: the run is failing, or a handler takes
    // over): failed now, not "succeeded" until the execution's end names it.
    else if (a.lastFailed) state = 'failed';
    else if (s.lambda && a.tasks === 0 && a.error === undefined) state = 'skipped';
    // A step run by the state machine itself (a conditional's Pass, a loop) whose guard said no
    // entered nothing past its `when` Choice.
    else if (guardOf.has(s.id) && a.enteredBody === 0 && a.error === undefined) state = 'skipped';
    else state = 'succeeded';
    let endedAt: number | undefined;
    if (state === 'failed' && open) endedAt = Math.max(a.last ?? -Infinity, a.cutAt ?? executionEndedAt ?? a.first!);
    else if (state !== 'running') endedAt = a.last ?? (state === 'failed' ? (a.cutAt ?? a.first) : undefined);
    own.set(s.id, { state, ...(a.first !== undefined ? { first: a.first } : {}), ...(endedAt !== undefined ? { endedAt } : {}) });
  }

  // Steps with nested steps: their span covers the nested ones', and a nested failure fails them.
  const childrenOf = new Map<string, string[]>();
  for (const s of steps)
    if (s.parent !== undefined && accs.has(s.parent)) childrenOf.set(s.parent, [...(childrenOf.get(s.parent) ?? []), s.id]);
  const spans = new Map<string, Own>();
  const spanOf = (id: string, seen: Set<string> = new Set()): Own => {
    const known = spans.get(id);
    if (known) return known;
    const o = { ...own.get(id)! };
    seen.add(id);
    const nested = (childrenOf.get(id) ?? []).filter((c) => !seen.has(c)).map((c) => spanOf(c, seen));
    if (ended && execution.status !== 'SUCCEEDED' && o.state !== 'failed' && nested.some((n) => n.state === 'failed')) o.state = 'failed';
    if (o.state === 'succeeded' || o.state === 'failed') {
      for (const n of nested) {
        if (n.first !== undefined && (o.first === undefined || n.first < o.first)) o.first = n.first;
        if (n.endedAt !== undefined && (o.endedAt === undefined || n.endedAt > o.endedAt)) o.endedAt = n.endedAt;
      }
    }
    spans.set(id, o);
    return o;
  };

  return steps.map((s) => {
    const a = accs.get(s.id)!;
    const { state, first, endedAt } = spanOf(s.id);
    const error = state === 'failed' ? (a.error ?? stoppedError(s.id)) : undefined;
    return {
      id: s.id,
      kind: s.kind,
      ...(s.parent !== undefined ? { parent: s.parent } : {}),
      state,
      reused: a.tasks > 0 && a.reusedTasks === a.tasks,
      ...(first !== undefined ? { startedAt: first } : {}),
      ...(endedAt !== undefined ? { endedAt } : {}),
      ...(first !== undefined ? { durationMs: Math.max(0, (endedAt ?? now) - first) } : {}),
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

/**
 * The step a run's failure names: `step 'X' failed: …`, the prefix a step's Catch writes, else the
 * owner of the state a Step Functions runtime error names (`An error occurred while executing the
 * state 'X: when' …`): a step's `when` guard is a Choice no Catch covers, so its failure (a JSON text
 * that does not parse, say) ends the run with the engine's own cause, which names only the state.
 */
function failedStepOf(cause: string, owner: ReadonlyMap<string, string>): string | undefined {
  const named = /step '([^']+)' failed/.exec(cause)?.[1];
  if (named !== undefined) return named;
  const state = /^An error occurred while executing the state '([^']+)'/.exec(cause)?.[1];
  return state !== undefined ? owner.get(state) : undefined;
}
