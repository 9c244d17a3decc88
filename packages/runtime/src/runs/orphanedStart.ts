import { readFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import type { RunRecord } from '../persistence/RunStore.js';

/**
 * Starting a run is two steps: the run record (which claims the idempotency key), then the
 * execution named after the run id. A process that ends between the two leaves a run recorded
 * RUNNING with no execution: an orphaned start. Whoever finds one completes it (the next start
 * with the same key, which has the input, starts the execution) or fails it (a reader, `runs
 * cancel`, the next owner of the stack), so no run stays RUNNING for good and no key stays stuck.
 */

/** The error name of a run failed because its start was interrupted (nothing of it ran). */
export const RUN_NOT_STARTED = 'RunNotStarted';

/**
 * How long after its record a run with no execution may still be starting, when its starter
 * cannot be asked (another host, a Lambda, a record written before starters were recorded).
 * Recording and starting take milliseconds; a fork copies its parent's results in between.
 */
export const START_GRACE_MS = 120_000;

/**
 * This process, as it signs the runs it starts (`startedBy`): `pid@host`, and `/<start>` where the
 * system says when a process started (Linux). Process ids are reused (a busy host wraps at 32,768),
 * so a pid alone may name another, live process long after the starter ended.
 */
export function runStarter(): string {
  if (thisStarter === undefined) {
    const start = processStart(process.pid);
    thisStarter = `${process.pid}@${hostname()}${start !== undefined ? `/${start}` : ''}`;
  }
  return thisStarter;
}

/** runStarter's answer: a process's pid, host and start never change while it runs. */
let thisStarter: string | undefined;

/** Whether the process that signed `starter` (pid@host[/start]) has ended, when it is on this host; undefined when it cannot be told. */
export function starterEnded(starter: string | undefined): boolean | undefined {
  const m = starter === undefined ? null : /^(\d+)@([^/]*)(?:\/(\d+))?$/.exec(starter);
  if (!m || m[2] !== hostname()) return undefined;
  const pid = Number(m[1]);
  if (starter === runStarter() || (pid === process.pid && m[3] === undefined)) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'EPERM';
  }
  // Alive: the starter, unless that pid now names a process started at another time.
  const start = m[3] === undefined ? undefined : processStart(pid);
  return start !== undefined && start !== m[3];
}

/** When process `pid` started, in clock ticks since boot (field 22 of /proc/<pid>/stat), or undefined where that cannot be read. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * Whether `run`, found RUNNING with no execution, is an orphaned start: its starter has ended,
 * or (when that cannot be told) the grace period is over. A live starter is still at it.
 */
export function isOrphanedStart(run: Pick<RunRecord, 'status' | 'startedAt' | 'startedBy'>, now = Date.now()): boolean {
  if (run.status !== 'RUNNING') return false;
  const ended = starterEnded(run.startedBy);
  if (ended !== undefined) return ended;
  return now - Date.parse(run.startedAt) > START_GRACE_MS;
}

/** Whether `run` is one whose start was interrupted and failed for it: nothing of it ran, so its key may start it anew. */
export function failedBeforeStart(run: Pick<RunRecord, 'status' | 'error'>): boolean {
  return run.status === 'FAILED' && run.error?.name === RUN_NOT_STARTED;
}

/** The error recorded on an orphaned start that is failed. */
export function notStartedError(run: Pick<RunRecord, 'startedBy'>): { name: string; message: string } {
  const who = run.startedBy !== undefined ? `the process that started it (${run.startedBy})` : 'the process that started it';
  return {
    name: RUN_NOT_STARTED,
    message: `${who} ended after recording the run and before starting its execution, so nothing of it ran; start it again (the same idempotency key starts this run anew)`,
  };
}

/**
 * Whether a failed StartExecution was refused by the service (an API error it answered, such as
 * ExecutionLimitExceeded or InvalidExecutionInput): nothing started, and the run can be failed
 * with that error. Anything else (the connection refused or reset, a timeout, a server fault)
 * leaves it unknown whether the execution started, so the run is left recorded as it is: an
 * orphaned start once its starter has ended, which whoever finds it resolves by asking for the
 * execution first. Failing it here would leave its key naming a failed run that never ran.
 */
export function startRefused(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const err = e as { $fault?: string; $metadata?: { httpStatusCode?: number } };
  const status = err.$metadata?.httpStatusCode;
  return err.$fault === 'client' && typeof status === 'number' && status >= 400 && status < 500;
}

/**
 * A crash point for the durability tests: the process kills itself (SIGKILL, as a power cut or
 * the OOM killer would end it) at the named point when STEPFORGE_TEST_CRASH_AT names it.
 */
export function crashPoint(name: string, detail?: string, env: Readonly<Record<string, string | undefined>> = process.env): void {
  if (env.STEPFORGE_TEST_CRASH_AT !== name) return;
  // Said first (synchronously, on stderr), so that a test knows which run the crash left behind.
  writeSync(2, `stepforge: crash point ${name}${detail !== undefined ? ` (${detail})` : ''}\n`);
  process.kill(process.pid, 'SIGKILL');
}
