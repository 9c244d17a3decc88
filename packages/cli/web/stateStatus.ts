/** How a state fared, as the view colours it. */
export type StateStatus = 'succeeded' | 'failed' | 'caught' | 'running' | 'waiting' | 'skipped' | 'notreached';

/** A history event as GetExecutionHistory answers it (the fields the view reads). */
export interface HistoryEvent {
  readonly id: number;
  readonly previousEventId?: number;
  readonly type: string;
  readonly timestamp: string | number;
  readonly [details: string]: unknown;
}

/** What happened in one state, over every time it was entered (a state in a Map runs once per iteration). */
export interface StateRun {
  readonly name: string;
  status: StateStatus;
  entered: number;
  exited: number;
  /** Tasks (Lambda or integration calls) scheduled: more than one per entry are retries. */
  scheduled: number;
  retries: number;
  failures: number;
  input?: unknown;
  output?: unknown;
  error?: { error?: string; cause?: string };
  startedAt?: number;
  endedAt?: number;
  durationMs?: number;
  /** Map states: iterations started, succeeded, failed. */
  iterations?: { started: number; succeeded: number; failed: number };
  /** The task of the last entry is waiting for a task token (an approval, when one is pending). */
  waitingForToken: boolean;
  /** Its last call failed (and none succeeded after it): left so, it was left through a Catch. */
  lastFailed: boolean;
}

const time = (t: string | number): number => (typeof t === 'number' ? t : Date.parse(t));

const FAILED = /(?:Failed|TimedOut|Aborted)$/;

/** The detail object of an event (`…EventDetails`), whatever its type. */
function details(e: HistoryEvent): Record<string, unknown> | undefined {
  for (const [k, v] of Object.entries(e)) if (k.endsWith('EventDetails') && v && typeof v === 'object') return v as Record<string, unknown>;
  return undefined;
}

/**
 * Per state name, what happened, from the execution history: each event is owned by the state its
 * `previousEventId` chain leads back to. `ended` says whether the execution has ended (a state still
 * open then failed, or was stopped). A state left after its last call failed was left through a Catch.
 */
export function stateRuns(history: readonly HistoryEvent[], executionStatus: string): Map<string, StateRun> {
  const runs = new Map<string, StateRun>();
  const owner = new Map<number, StateRun>();
  const open = new Map<StateRun, number>();
  const get = (name: string): StateRun => {
    let r = runs.get(name);
    if (!r)
      runs.set(
        name,
        (r = {
          name,
          status: 'running',
          entered: 0,
          exited: 0,
          scheduled: 0,
          retries: 0,
          failures: 0,
          waitingForToken: false,
          lastFailed: false,
        }),
      );
    return r;
  };
  for (const e of history) {
    const d = details(e);
    const prev = e.previousEventId !== undefined ? owner.get(e.previousEventId) : undefined;
    if (e.type.endsWith('StateEntered')) {
      const r = get(String(d?.name));
      r.entered++;
      open.set(r, (open.get(r) ?? 0) + 1);
      r.input = d?.input;
      const t = time(e.timestamp);
      r.startedAt ??= t;
      r.waitingForToken = false;
      owner.set(e.id, r);
    } else if (e.type.endsWith('StateExited')) {
      const r = get(String(d?.name));
      r.exited++;
      open.set(r, Math.max(0, (open.get(r) ?? 1) - 1));
      r.output = d?.output;
      r.endedAt = time(e.timestamp);
      r.waitingForToken = false;
    } else if (
      e.type === 'MapIterationStarted' ||
      e.type === 'MapIterationSucceeded' ||
      e.type === 'MapIterationFailed' ||
      e.type === 'MapIterationAborted'
    ) {
      const r = get(String(d?.name));
      r.iterations ??= { started: 0, succeeded: 0, failed: 0 };
      if (e.type === 'MapIterationStarted') r.iterations.started++;
      else if (e.type === 'MapIterationSucceeded') r.iterations.succeeded++;
      else r.iterations.failed++;
      owner.set(e.id, r);
    } else if (prev) {
      owner.set(e.id, prev);
      if (/(?:TaskScheduled|LambdaFunctionScheduled|ActivityScheduled)$/.test(e.type)) {
        prev.scheduled++;
        if (prev.scheduled > prev.entered) prev.retries = prev.scheduled - prev.entered;
      }
      if (e.type === 'TaskSubmitted' || e.type === 'TaskStarted') {
        // A .waitForTaskToken task is submitted and then waits: until it ends, it waits for its token.
        prev.waitingForToken = e.type === 'TaskSubmitted';
      }
      if (/Succeeded$/.test(e.type)) {
        prev.waitingForToken = false;
        prev.lastFailed = false;
      }
      if (FAILED.test(e.type) && e.type !== 'ExecutionFailed') {
        prev.failures++;
        prev.waitingForToken = false;
        prev.lastFailed = true;
        if (d && (d.error !== undefined || d.cause !== undefined))
          prev.error = {
            ...(typeof d.error === 'string' ? { error: d.error } : {}),
            ...(typeof d.cause === 'string' ? { cause: d.cause } : {}),
          };
      }
    }
    if (e.type === 'ExecutionFailed' || e.type === 'ExecutionAborted' || e.type === 'ExecutionTimedOut') {
      const r = prev;
      if (r && d && !r.error)
        r.error = {
          ...(typeof d.error === 'string' ? { error: d.error } : {}),
          ...(typeof d.cause === 'string' ? { cause: d.cause } : {}),
        };
    }
  }
  const ended = executionStatus !== 'RUNNING';
  for (const r of runs.values()) {
    const stillOpen = (open.get(r) ?? 0) > 0;
    if (r.startedAt !== undefined) r.durationMs = (r.endedAt ?? (ended ? r.startedAt : Date.now())) - r.startedAt;
    if (stillOpen) r.status = ended ? 'failed' : r.waitingForToken ? 'waiting' : 'running';
    else r.status = r.lastFailed ? 'caught' : 'succeeded';
  }
  return runs;
}

/** The status of each drawn state: from its runs, else skipped (its step's guard skipped it) or not reached. */
export function statusOf(name: string, runs: ReadonlyMap<string, StateRun>, skippedStates: ReadonlySet<string>): StateStatus {
  const r = runs.get(name);
  if (r) return r.status;
  return skippedStates.has(name) ? 'skipped' : 'notreached';
}

/** People's words for each status (the legend and the accessible names). */
export const STATUS_LABEL: Record<StateStatus, string> = {
  succeeded: 'Succeeded',
  failed: 'Failed',
  caught: 'Caught error',
  running: 'In progress',
  waiting: 'Waiting for approval',
  skipped: 'Skipped',
  notreached: 'Not reached',
};
