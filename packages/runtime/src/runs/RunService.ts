import { randomUUID } from 'node:crypto';
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { historyStepOutputs } from './historyStepOutputs.js';
import {
  MAX_INPUT_DEPTH,
  RUN_META_KEY,
  StepforgeError,
  applyInputSchema,
  executionInputSizeError,
  idempotencyKeyError,
  inputDepthError,
} from '@stepforge/contract';
import { decideApproval, listApprovals, type ApprovalDecision } from '../approvals/approvals.js';
import type { ApprovalRecord } from '../persistence/ApprovalStore.js';
import { copyCommittedSteps } from '../persistence/copyCommittedSteps.js';
import type { RunEvent, RunRecord, StepRecord } from '../persistence/RunStore.js';
import type { Runtime } from '../runtime/Runtime.js';
import { downstreamSet } from './downstreamSet.js';
import { idempotencyKeyConflict } from './idempotencyKeyConflict.js';
import { inputDiffers } from './inputDiffers.js';
import { crashPoint, failedBeforeStart, isOrphanedStart, notStartedError, runStarter, startRefused } from './orphanedStart.js';
import type { ExecutionDescription, ExecutionEnd, Executions, WorkflowCatalog, WorkflowEntry } from './ports.js';
import { readableCause } from './readableCause.js';
import { runExecutionArn } from './runExecutionArn.js';
import { computeStepProgress, type StepProgress } from './StepProgress.js';
import { baseStepId, stepProgressFromRecords } from './stepProgressFromRecords.js';

type RunRecordView = RunRecord;
type StepRecordView = StepRecord;
type RunEventView = RunEvent;
type ApprovalRecordView = ApprovalRecord;

/** What starting a run returns. */
export interface StartedRun {
  readonly run: RunRecordView;
  /** The run already existed under the idempotency key: nothing new was started. */
  readonly reused: boolean;
  /** A reused run that was started with another input than this start's (the run is returned all the same). */
  readonly inputDiffers?: boolean;
}

/** A run with its step records and history-derived progress. */
export interface RunDetails {
  readonly run: RunRecordView;
  readonly steps: readonly StepProgress[];
  readonly records: readonly StepRecordView[];
  readonly history: readonly HistoryEvent[];
  /** The run's audit events, oldest first: refused tool calls, approvals asked and decided, the fork it is. */
  readonly events: readonly RunEventView[];
  /** What the steps without a Lambda call (conditionals, loops) produced, by step id, read from the history. */
  readonly outputs?: ReadonlyMap<string, unknown>;
}

/** Options of start. */
export interface StartOptions {
  readonly idempotencyKey?: string;
  readonly parentRunId?: string;
  /** Step ids whose committed results are NOT carried over from the parent run (fork). */
  readonly rerun?: ReadonlySet<string>;
  /** Skip input validation (forks reuse the parent's validated input). */
  readonly validated?: boolean;
  /**
   * The run id to use, chosen by the caller so that a start repeated after the stack's owner went
   * away under it (StackSession) finds the run its first attempt began, and starts its execution
   * if that attempt did not get to, rather than starting a second run.
   */
  readonly runId?: string;
}

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']);
/** Runs this process is starting right now (between their record, or taking them over, and StartExecution's answer). */
const STARTING = new Set<string>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a run service is built from: the runtime's stores, and the two ports. */
export interface RunServiceOptions {
  readonly runtime: Runtime;
  readonly executions: Executions;
  readonly catalog: WorkflowCatalog;
  /**
   * Settle each run it starts when its execution ends, without being asked (the embedded stack's
   * owner, whose engine runs the executions). Elsewhere a run settles when it is read or waited for.
   */
  readonly watchStarted?: boolean;
  /** True once the stack under the service has closed: a wait stops (the run goes on elsewhere). */
  readonly closed?: () => boolean;
  /** How long a wait sleeps between two DescribeExecution calls, in ms (default 20; on AWS, longer). */
  readonly pollMs?: number;
}

/**
 * Runs, the one run service of every face (the CLI, `stepforge serve`, the HTTP API on AWS, the
 * trigger Lambda): start (input checked against the workflow's schema, idempotent by key), wait,
 * inspect, fork (`retry`, `restart --from`), cancel, resolve, and approvals. A run is one Step
 * Functions execution named by the run id; the run record in DynamoDB is written before the
 * execution starts and settled when it ends. Forks are new runs whose steps find the parent's
 * committed results under their own idempotency keys (copied in the table, so forks work on AWS
 * as embedded), so the handlers return them instead of running again. Written against two ports,
 * Executions and WorkflowCatalog, of which each platform gives its adapters.
 */
export class RunService {
  readonly catalog: WorkflowCatalog;
  readonly runtime: Runtime;
  readonly #executions: Executions;
  readonly #watchStarted: boolean;
  readonly #closed: () => boolean;
  readonly #pollMs: number;
  readonly #watching = new Map<string, Promise<RunRecordView>>();
  /** Runs this service started and has not settled yet: wait() needs no read to know them. */
  readonly #started = new Map<string, RunRecordView>();

  constructor(options: RunServiceOptions) {
    this.runtime = options.runtime;
    this.catalog = options.catalog;
    this.#executions = options.executions;
    this.#watchStarted = options.watchStarted ?? false;
    this.#closed = options.closed ?? (() => false);
    this.#pollMs = options.pollMs ?? 20;
  }

  get runs() {
    return this.runtime.runs;
  }

  /** Validates the input against the workflow's `input:` schema (StepforgeError `invalid_input`). */
  validateInput(entry: WorkflowEntry, input: unknown): Record<string, unknown> {
    return applyInputSchema(entry.inputSchema, input);
  }

  /** The workflow named `name`, or StepforgeError `unknown_workflow`. */
  async workflow(name: string): Promise<WorkflowEntry> {
    const entry = await this.catalog.get(name);
    if (!entry)
      throw new StepforgeError('unknown_workflow', `no workflow named '${name}'`, { hint: 'GET /workflows lists the workflows there are' });
    return entry;
  }

  /** Starts a run of a registered workflow; the same idempotency key returns the same run. */
  async start(entry: WorkflowEntry, input: unknown, options: StartOptions = {}): Promise<StartedRun> {
    const keyError = options.idempotencyKey !== undefined ? idempotencyKeyError(options.idempotencyKey) : undefined;
    if (keyError !== undefined)
      throw new StepforgeError('invalid_idempotency_key', keyError, {
        hint: 'use a shorter key of printable characters',
        details: { idempotencyKey: options.idempotencyKey },
      });
    // Before anything walks it: input nested deeper than a run record can hold would overflow
    // the recursive code on the way (and DynamoDB would refuse the record).
    const tooDeep = options.validated ? undefined : inputDepthError(input);
    if (tooDeep !== undefined)
      throw new StepforgeError('input_too_deep', tooDeep, {
        hint: 'flatten the input, or pass the nested data by reference (a file path or URL)',
        details: { limit: MAX_INPUT_DEPTH },
      });
    const value = options.validated ? (input as Record<string, unknown>) : this.validateInput(entry, input);
    const runId = options.runId ?? randomUUID();
    // The execution ARN follows from the state machine and the run id, so the run record carries
    // it from the start (no second write after StartExecution). From the id the record is written
    // with, which is the key's when an earlier start claimed the key and ended before its record.
    const executionPrefix = entry.stateMachineArn.replace(':stateMachine:', ':execution:');
    const meta = {
      ...(options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
      ...(options.parentRunId !== undefined ? { parentRunId: options.parentRunId } : {}),
    };
    const executionInput = JSON.stringify({ ...value, [RUN_META_KEY]: meta });
    // Refused before anything is stored: StartExecution would refuse it after the run was recorded.
    const tooLarge = executionInputSizeError(executionInput);
    if (tooLarge !== undefined) {
      throw new StepforgeError('input_too_large', tooLarge, {
        hint: 'pass large data by reference (a file path, a URL, an S3 key) in the input rather than inline',
      });
    }
    // Marked as starting before its record can be read: a concurrent start with the same key in
    // this process that finds the record must wait for this start, not take it for a start lost with
    // an earlier stack of this process (#completeOrphan's `ours`), and start it a second time.
    const markedHere = !STARTING.has(runId);
    STARTING.add(runId);
    const startedRun = await this.runs
      .startRun({
        workflow: entry.name,
        ...(entry.displayName !== undefined ? { workflowDisplayName: entry.displayName } : {}),
        runId,
        executionArn: (id) => `${executionPrefix}:${id}`,
        startedBy: runStarter(),
        ...(options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
        ...(options.parentRunId !== undefined ? { parentRunId: options.parentRunId } : {}),
        ...(entry.version !== undefined ? { workflowVersion: entry.version } : {}),
        ...(entry.policy !== undefined ? { policy: entry.policy } : {}),
        input: value,
        // Between the key and the run record: a process that ends here leaves a key naming a run id
        // with no run, which the next start with the key writes and starts.
        keyClaimed: (id) => crashPoint('after-run-key', `run ${id}`),
      })
      .catch((e: unknown) => {
        if (markedHere) STARTING.delete(runId);
        throw e;
      });
    // Kept only for the run this start goes on to start (below): a reused run, or the one an
    // earlier start's key names, has another id.
    if (markedHere && startedRun.run.runId !== runId) STARTING.delete(runId);
    const { run, reused } = startedRun;
    // Our own earlier attempt at this start (options.runId): go on where it stopped.
    const again = reused && options.runId !== undefined && run.runId === options.runId;
    if (reused && !again) {
      const completed = await this.#completeOrphan(entry, run, value, executionInput, options.idempotencyKey);
      if (completed !== undefined) return completed;
      return this.#replay(entry, run, value, options.idempotencyKey);
    }
    STARTING.add(run.runId);
    try {
      if (options.parentRunId !== undefined) await this.#carryOver(options.parentRunId, run.runId, options.rerun ?? new Set());
      // Between the record and the execution: a process that ends here leaves an orphaned start,
      // which whoever finds it completes or fails (#completeOrphan, #failOrphan).
      crashPoint('after-run-record', `run ${run.runId}`);
      await this.#startExecution({ stateMachineArn: entry.stateMachineArn, name: run.runId, input: executionInput }, runExecutionArn(run));
    } catch (e) {
      // The earlier attempt started it, and it has ended since (a running one is returned as is).
      if (!(again && (e as Error).name === 'ExecutionAlreadyExists')) {
        // Only a refusal fails the run (orphanedStart.ts, startRefused): after a lost connection
        // the execution may have started, and the run is left for whoever finds it to resolve.
        if (startRefused(e))
          await this.runs.finishRun(run.runId, { status: 'FAILED', error: { name: (e as Error).name, message: (e as Error).message } });
        throw e;
      }
    } finally {
      STARTING.delete(run.runId);
    }
    const started = run;
    this.#started.set(run.runId, run);
    if (this.#watchStarted) void this.wait(run.runId).catch(() => undefined);
    return { run: started, reused: false };
  }

  /**
   * The run an idempotency key names, when its start was interrupted (orphanedStart.ts): recorded
   * RUNNING with no execution by a process that has ended, or failed for that since. This start
   * has the input, so it completes that start: it takes the run over (one conditional write, so
   * of two such starts one does it) and starts its execution, and the key runs its one run. With
   * another input than the run was recorded with, the orphan is failed instead (starting it would
   * run it on an input its record does not show). Undefined: nothing to complete.
   */
  async #completeOrphan(
    entry: WorkflowEntry,
    run: RunRecordView,
    value: Record<string, unknown>,
    executionInput: string,
    key: string | undefined,
  ): Promise<StartedRun | undefined> {
    if (idempotencyKeyConflict(key, run, entry.name) !== undefined || run.parentRunId !== undefined) return undefined;
    const failed = failedBeforeStart(run);
    // Signed by this process, which is not starting it now: an earlier start here (this one's own
    // attempt before the stack was taken over) recorded or took it over and lost the StartExecution
    // with the stack. Waiting for it would wait for this process: it completes it instead.
    const ours = !failed && run.startedBy === runStarter() && !STARTING.has(run.runId);
    if (!failed) {
      if (run.status !== 'RUNNING' || !(ours || isOrphanedStart(run))) return undefined;
      if (await this.describeExecution(runExecutionArn(run))) return undefined;
    }
    if (inputDiffers(this.runtime.redactor, value, run.input)) {
      if (!failed) await this.#failOrphan(run);
      return undefined;
    }
    STARTING.add(run.runId);
    try {
      const taken = ours ? run : await this.runs.takeOverStart(run, { to: 'start', starter: runStarter() });
      if (taken === undefined) return undefined;
      await this.#startExecution(
        { stateMachineArn: entry.stateMachineArn, name: run.runId, input: executionInput },
        runExecutionArn(run),
      ).catch((e: unknown) => {
        // Another finder of the same orphan started it with the same input meanwhile.
        if ((e as Error).name !== 'ExecutionAlreadyExists') throw e;
      });
      return this.#startedNow(taken);
    } finally {
      STARTING.delete(run.runId);
    }
  }

  #startedNow(taken: RunRecordView): StartedRun {
    this.#started.set(taken.runId, taken);
    if (this.#watchStarted) void this.wait(taken.runId).catch(() => undefined);
    return { run: taken, reused: false };
  }

  /**
   * Fails an orphaned start (orphanedStart.ts) found RUNNING with no execution: its starter ended
   * before starting it, so nothing of it ran. Returns the run as it is now (failed here, or as
   * another finder or its starter left it).
   */
  async #failOrphan(run: RunRecordView): Promise<RunRecordView> {
    const failed = await this.runs.takeOverStart(run, { to: 'fail', error: notStartedError(run) });
    this.#started.delete(run.runId);
    return failed ?? (await this.#record(run.runId));
  }

  /** `run` found RUNNING with no execution: failed when it is an orphaned start, else as it is. */
  async #orphanOrRunning(run: RunRecordView): Promise<RunRecordView> {
    return isOrphanedStart(run) ? this.#failOrphan(run) : run;
  }

  /**
   * The run an idempotency key already names. A key names one run: one of another workflow is
   * StepforgeError `idempotency_key_conflict` (returning it would answer for the wrong workflow).
   * The same workflow's run comes back as it is, with `inputDiffers` when it was started with
   * another input (compared as stored, secrets redacted), so the caller can say so.
   */
  async #replay(entry: WorkflowEntry, run: RunRecordView, value: Record<string, unknown>, key: string | undefined): Promise<StartedRun> {
    const conflict = idempotencyKeyConflict(key, run, entry.name);
    if (conflict !== undefined) {
      throw new StepforgeError('idempotency_key_conflict', conflict, {
        hint: 'an idempotency key names one run: use another key for this workflow',
        details: { runId: run.runId, workflow: run.workflow },
      });
    }
    const differs = inputDiffers(this.runtime.redactor, value, run.input);
    return { run, reused: true, ...(differs ? { inputDiffers: true } : {}) };
  }

  /**
   * StartExecution through the port; API errors keep their names (`ExecutionAlreadyExists`, …).
   * Step Functions answers a StartExecution repeated with the same name and input with the running
   * execution, but with ExecutionAlreadyExists once it has ended: a start retried after its answer
   * was lost (the SDK retries a timeout), the execution quick enough to end in between, would fail
   * a run whose execution ran. The execution is named after the run, so one there already with
   * this input is the run's own: the start stands, and the run settles from it. Another input is
   * another execution, and the error stands.
   */
  async #startExecution(req: { stateMachineArn: string; name: string; input: string }, executionArn: string): Promise<void> {
    try {
      await this.#executions.start(req);
    } catch (e) {
      if ((e as Error).name !== 'ExecutionAlreadyExists') throw e;
      const there = await this.#executions.describe(executionArn).catch(() => undefined);
      if (there?.input !== req.input) throw e;
    }
  }

  /** The run record (brought up to date, see #current), or StepforgeError `unknown_run`. */
  async getRun(runId: string): Promise<RunRecordView> {
    return this.#current(await this.#record(runId));
  }

  /** The run record as stored, or StepforgeError `unknown_run`. */
  async #record(runId: string): Promise<RunRecordView> {
    const run = await this.runs.getRun(runId);
    if (!run) throw new StepforgeError('unknown_run', `no run with id '${runId}'`, { hint: "'stepforge runs list' shows the runs" });
    return run;
  }

  /**
   * Runs, newest first, each brought up to date (see #current). With a status other than RUNNING,
   * runs recorded RUNNING whose execution has ended with that status are listed too.
   */
  async listRuns(p: { workflow?: string; status?: RunRecordView['status']; limit?: number } = {}): Promise<RunRecordView[]> {
    const listed = await this.runs.listRuns(p);
    const stale = p.status !== undefined && p.status !== 'RUNNING' ? await this.runs.listRuns({ ...p, status: 'RUNNING' }) : [];
    const byId = new Map<string, RunRecordView>();
    for (const run of await Promise.all([...listed, ...stale].map((r) => this.#current(r)))) byId.set(run.runId, run);
    return [...byId.values()]
      .filter((r) => p.status === undefined || r.status === p.status)
      .sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0))
      .slice(0, p.limit ?? 50);
  }

  /**
   * A run recorded RUNNING whose execution has ended, settled now. The process that waits for a
   * run settles it when the execution ends; an execution resumed and finished by another process
   * (one that held the stack for a while after the run's own process ended) had nobody waiting.
   */
  async #current(run: RunRecordView): Promise<RunRecordView> {
    if (run.status !== 'RUNNING' || this.#watching.has(run.runId)) return run;
    const d = await this.describeExecution(runExecutionArn(run));
    if (!d) return this.#orphanOrRunning(run);
    return TERMINAL.has(d.status ?? '') ? this.#settle(run, d) : run;
  }

  /** Waits until the run's execution ends, settles the run record, and returns it. */
  wait(runId: string): Promise<RunRecordView> {
    let w = this.#watching.get(runId);
    if (!w) {
      w = this.#wait(runId).finally(() => this.#watching.delete(runId));
      this.#watching.set(runId, w);
    }
    return w;
  }

  async #wait(runId: string): Promise<RunRecordView> {
    // As stored: the loop below settles it when its execution has ended.
    let run = this.#started.get(runId) ?? (await this.#record(runId));
    if (TERMINAL.has(run.status)) return run;
    const arn = runExecutionArn(run);
    for (let i = 0; ; i++) {
      const d = await this.#executionEnd(arn);
      if (d && TERMINAL.has(d.status ?? '')) return this.#settle(run, d);
      if (!d && i % 100 === 0) {
        // Another starter claimed the key and has not started the execution yet, or ended first
        // (an orphaned start: failed here, rather than waited for in vain).
        if (i > 0) run = await this.#record(runId);
        if (TERMINAL.has(run.status)) return run;
        run = await this.#orphanOrRunning(run);
        if (TERMINAL.has(run.status)) return run;
        if (i > 3000) throw new StepforgeError('run_not_started', `run '${runId}' was claimed but its execution never started`);
      }
      // The stack closed under the wait (serve stopping): the execution stays RUNNING in the store
      // and goes on when a process holds the stack again, so there is nothing left to wait for here,
      // and a wait that went on would keep the process from ending.
      if (this.#closed()) {
        throw new StepforgeError(
          'stack_closed',
          `the stack closed while run '${runId}' was running; it goes on when a command of this project holds the stack again`,
          {
            hint: `start stepforge serve again, or follow it with: stepforge runs show ${runId}`,
            details: { runId },
          },
        );
      }
      await sleep(d ? this.#pollMs : Math.max(1, this.#pollMs / 2));
    }
  }

  /**
   * The execution's state once it has ended (or now, where the port cannot wait on it), or
   * undefined when it does not exist (yet). The embedded owner's engine resolves when the
   * execution ends instead of being polled.
   */
  async #executionEnd(executionArn: string): Promise<ExecutionEnd | undefined> {
    return this.#executions.waitFor ? this.#executions.waitFor(executionArn) : this.#executions.describe(executionArn);
  }

  /**
   * A run's output as a person reads it: outputs that travelled by reference (`{"$ref"}`, a large
   * step output, or a for_each iteration's beyond its smaller inline limit) replaced by the stored
   * values, as the steps that read them received them.
   */
  async readableOutput(output: unknown): Promise<unknown> {
    return this.runtime.blobs.resolveRefs(output);
  }

  /**
   * A run's details as a person reads them (`runs show`, the HTTP API, the view): its output and its
   * steps' outputs with the values of outputs that travelled by reference (the reference itself stays
   * on the record as `outputRef`); a value whose stored copy cannot be read stays the reference.
   */
  async readableDetails(runId: string): Promise<RunDetails> {
    const found = await this.details(runId);
    const readable = (v: unknown): Promise<unknown> => (v === undefined ? Promise.resolve(v) : this.readableOutput(v).catch(() => v));
    const [output, records, outputs] = await Promise.all([
      readable(found.run.output),
      Promise.all(found.records.map(async (r) => (r.output === undefined ? r : { ...r, output: await readable(r.output) }))),
      Promise.all([...(found.outputs ?? [])].map(async ([id, v]) => [id, await readable(v)] as const)),
    ]);
    return { ...found, run: { ...found.run, output }, records, outputs: new Map(outputs) };
  }

  /** DescribeExecution, or undefined when it does not exist (yet). */
  describeExecution(executionArn: string): Promise<ExecutionDescription | undefined> {
    return this.#executions.describe(executionArn);
  }

  async #settle(run: RunRecordView, d: ExecutionEnd): Promise<RunRecordView> {
    const status = d.status as RunRecordView['status'];
    const output = d.output !== undefined ? safeJson(d.output) : undefined;
    const settled = await this.runs.finishRun(run.runId, {
      status,
      startedAt: run.startedAt,
      // When the execution ended (for a run settled after the fact, some time before now).
      ...(d.stopDate !== undefined ? { endedAt: new Date(d.stopDate).toISOString() } : {}),
      ...(output !== undefined ? { output } : {}),
      // A failed Lambda's cause is its error JSON, stack trace and all (the history keeps it, as on
      // AWS); the run record keeps what a person and `runs show --json` read: the message.
      ...(status !== 'SUCCEEDED' ? { error: { name: d.error ?? status, message: readableCause(d.cause ?? '') } } : {}),
    });
    this.#started.delete(run.runId);
    return settled;
  }

  /** The execution history (every page). */
  history(executionArn: string): Promise<HistoryEvent[]> {
    return this.#executions.history(executionArn);
  }

  /** Per-step progress of a run, from its execution history. */
  async progress(
    run: RunRecordView,
    entry?: WorkflowEntry,
  ): Promise<{ steps: StepProgress[]; history: HistoryEvent[]; execution?: ExecutionDescription }> {
    const wf = entry ?? (await this.catalog.forRun(run));
    const arn = runExecutionArn(run);
    const execution = await this.describeExecution(arn);
    const history = execution ? await this.history(arn) : [];
    const steps = wf ? computeStepProgress(wf.steps, history, execution ?? { status: run.status }) : [];
    return { steps, history, ...(execution ? { execution } : {}) };
  }

  /** A run with its steps (records and progress) and history. */
  async details(runId: string): Promise<RunDetails> {
    const run = await this.getRun(runId);
    const wf = await this.catalog.forRun(run);
    const [{ steps, history }, records, events] = await Promise.all([
      this.progress(run, wf),
      this.runs.listSteps(runId),
      this.runs.listEvents(runId),
    ]);
    // No history (the execution was dropped after the retention period, or its history cannot be
    // read): the steps as their records in DynamoDB tell it, rather than every one "skipped".
    if (history.length === 0 && records.length > 0 && wf)
      return { run, steps: stepProgressFromRecords(wf.steps, records, run.status), records, history, events };
    return { run, steps, records, history, events, outputs: historyStepOutputs(wf?.steps ?? [], history) };
  }

  /** `runs retry`: a new run of the same workflow and input that re-runs only the steps that did not finish. */
  async retry(runId: string, fork: { runId?: string } = {}): Promise<StartedRun> {
    const parent = ended(await this.getRun(runId), 'retry');
    const entry = await this.#entry(parent, 'retry');
    return this.start(entry, await this.#parentInput(parent), { parentRunId: parent.runId, rerun: new Set(), validated: true, ...fork });
  }

  /** `runs restart --from STEP`: a new run that re-runs STEP and everything downstream, reusing the rest. */
  async restart(runId: string, fromStep: string, fork: { runId?: string } = {}): Promise<StartedRun & { rerun: string[] }> {
    const parent = ended(await this.getRun(runId), 'restart');
    const entry = await this.#entry(parent, 'restart');
    if (!entry.steps.some((s) => s.id === fromStep)) {
      throw new StepforgeError('unknown_step', `workflow '${entry.name}' has no step '${fromStep}'`, {
        hint: `steps: ${entry.steps.map((s) => s.id).join(', ')}`,
        details: { runId, step: fromStep },
      });
    }
    const rerun = downstreamSet(entry, fromStep);
    const started = await this.start(entry, await this.#parentInput(parent), {
      parentRunId: parent.runId,
      rerun,
      validated: true,
      ...fork,
    });
    return { ...started, rerun: [...rerun].sort() };
  }

  /** Stops a running run (its record settles as ABORTED); a run that has ended is returned as it is. */
  async cancel(runId: string, reason?: string): Promise<RunRecordView> {
    const run = await this.getRun(runId);
    return TERMINAL.has(run.status) ? run : this.stop(run, reason);
  }

  /**
   * `runs resolve`: records by hand the outcome of a step whose call's outcome is unknown (it
   * failed with StepOutcomeUnknown: the call went out and no answer was recorded), after a person
   * checked the target and found the call done. The step's idempotency record is committed with
   * `output`, as if the call had answered, and its step record becomes SUCCEEDED; `runs retry`
   * then carries that output over instead of calling again. `step` is a step name (it must name
   * one such instance) or an instance id (`review[2]`).
   */
  async resolve(runId: string, step: string, output: unknown): Promise<{ run: RunRecordView; stepId: string; target: string }> {
    const run = await this.getRun(runId);
    if (run.status === 'RUNNING') {
      throw new StepforgeError(
        'run_running',
        `run '${runId}' is still running; resolve records the outcome of a step of a run that has ended`,
        {
          hint: `wait for it to end, or cancel it: stepforge runs cancel ${runId}`,
          details: { runId },
        },
      );
    }
    const rt = this.runtime;
    const items = await rt.runs.listStepCalls(runId);
    const named = items.filter((x) => x.stepId === step || baseStepId(x.stepId) === step);
    if (named.length === 0) {
      const known = [...new Set(items.map((x) => baseStepId(x.stepId)))].sort();
      throw new StepforgeError(
        'unknown_step',
        `run '${runId}' has no step '${step}'${known.length > 0 ? ` (its steps: ${known.join(', ')})` : ''}`,
        {
          hint: `stepforge runs show ${runId} lists its steps`,
          details: { runId, step },
        },
      );
    }
    const unknown = named.filter((x) => x.call?.status === 'INPROGRESS' && x.call.dispatched);
    if (unknown.length === 0) {
      const status = named.map((x) => `${x.stepId} ${x.status ?? 'pending'}`).join(', ');
      throw new StepforgeError(
        'nothing_to_resolve',
        `step '${step}' of run '${runId}' has no call whose outcome is unknown (${status}); only a step that failed with StepOutcomeUnknown is resolved by hand`,
        {
          hint: `to run the unfinished steps again: stepforge runs retry ${runId}`,
          details: { runId, step },
        },
      );
    }
    if (unknown.length > 1) {
      throw new StepforgeError(
        'ambiguous_step',
        `step '${step}' of run '${runId}' has ${unknown.length} calls whose outcome is unknown: ${unknown.map((x) => x.stepId).join(', ')}`,
        {
          hint: `resolve them one by one: --step ${unknown[0]!.stepId}`,
          details: { runId, step, instances: unknown.map((x) => x.stepId) },
        },
      );
    }
    const { stepId, call } = unknown[0]!;
    const key = call!.key;
    const target = call!.dispatchTarget ?? 'an external service';
    const record = await rt.idempotency.getRecord(key);
    if (!record || record.status !== 'INPROGRESS') {
      throw new StepforgeError(
        'nothing_to_resolve',
        `step '${stepId}' of run '${runId}' was settled meanwhile (${record?.status ?? 'no record'})`,
        { details: { runId, step: stepId } },
      );
    }
    // Committed as the step itself commits (executeStep): the output (a large one as a blob), no tokens used.
    const stored = await rt.blobs.maybeStore(rt.redactor.redact(output), rt.config.inlineOutputMaxBytes);
    const usage = { inputTokens: 0, outputTokens: 0 };
    const committed = { output: stored.value, ...(stored.ref ? { outputRef: stored.ref } : {}), usage, extra: { resolvedByHand: true } };
    const nowMs = rt.config.clock();
    await rt.idempotency.saveSuccess(key, {
      leaseId: record.leaseId,
      output: committed,
      nowMs,
      ttlSeconds: rt.config.idempotencyTtlSeconds,
      step: { output: stored.value, ...(stored.ref ? { outputRef: stored.ref.ref } : {}), usage },
    });
    // The failure it recorded is no longer the step's state.
    await rt.runs.clearStepError(runId, stepId);
    await rt.runs.recordEvent({
      runId,
      stepId,
      type: 'StepResolved',
      detail: { message: `the outcome of ${target} was recorded by hand as done`, target },
    });
    return { run, stepId, target };
  }

  /** Stops a run read as RUNNING (StopExecution) and waits until its record settles. */
  async stop(run: RunRecordView, reason = 'cancelled by the user'): Promise<RunRecordView> {
    try {
      await this.#executions.stop(runExecutionArn(run), 'Cancelled', reason);
    } catch (e) {
      if ((e as { name?: string }).name !== 'ExecutionDoesNotExist') throw e;
      // No execution: an orphaned start (failed now: nothing of it ran), or one its live starter
      // is about to start, which cannot be stopped before it exists.
      const now = await this.#orphanOrRunning(await this.#record(run.runId));
      if (TERMINAL.has(now.status)) return now;
      throw new StepforgeError(
        'run_not_started',
        `run '${run.runId}' has no execution yet: ${now.startedBy ?? 'the process starting it'} is starting it`,
        {
          hint: `run the cancel again in a moment: stepforge runs cancel ${run.runId}`,
          details: { runId: run.runId },
        },
      );
    }
    return this.wait(run.runId);
  }

  /**
   * The workflow a fork of `run` runs: as registered now, which must be the version the run ran. A
   * fork re-runs some of the run's steps and carries the rest over; after the workflow changed
   * (its file edited, or another file registered under its name) those steps may not be there, nor
   * mean the same, so the fork is refused (`workflow_changed`) rather than run on another workflow.
   */
  async #entry(run: RunRecordView, fork: 'retry' | 'restart'): Promise<WorkflowEntry> {
    const entry = await this.catalog.get(run.workflow);
    if (!entry)
      throw new StepforgeError(
        'unknown_workflow',
        `workflow '${run.workflow}' of run '${run.runId}' is not registered; run its file once to register it`,
      );
    if (run.workflowVersion !== undefined && entry.version !== run.workflowVersion) {
      const ran = await this.catalog.get(run.workflow, run.workflowVersion);
      const from = (e: WorkflowEntry | undefined) => (e?.file !== undefined ? ` (from ${e.file})` : '');
      throw new StepforgeError(
        'workflow_changed',
        `run '${run.runId}' ran another version of workflow '${run.workflow}'${from(ran)} than the one registered now${from(entry)} at ${entry.updatedAt}; ${fork} runs the workflow as registered now, so it cannot re-run that run's steps`,
        {
          hint: `to ${fork} it, bring back the workflow as the run ran it (the file as it was) and run that file once, which registers it again; or start a new run of the workflow as it is now`,
          details: { runId: run.runId, workflow: run.workflow, ranVersion: run.workflowVersion, currentVersion: entry.version ?? null },
        },
      );
    }
    return entry;
  }

  /** The parent's input as the execution saw it (unredacted), without the run metadata. */
  async #parentInput(run: RunRecordView): Promise<Record<string, unknown>> {
    const d = await this.describeExecution(runExecutionArn(run));
    const raw = d?.input !== undefined ? safeJson(d.input) : run.input;
    const { [RUN_META_KEY]: _meta, ...rest } = (raw ?? {}) as Record<string, unknown>;
    return rest;
  }

  /**
   * Copies the parent's committed step results to the fork's keys (the table's layout is
   * persistence's: copyCommittedSteps), except for the steps being re-run, and records the fork.
   */
  async #carryOver(parentRunId: string, runId: string, rerun: ReadonlySet<string>): Promise<number> {
    const copied = await copyCommittedSteps(this.runtime.db, parentRunId, runId, (instance) => !rerun.has(baseStepId(instance)));
    await this.runs.recordEvent({ runId, type: 'fork', detail: { parentRunId, carriedOver: copied, rerun: [...rerun].sort() } });
    return copied;
  }

  /** How a run has ended, brought up to date; undefined while it runs (or when it is unknown). */
  readonly #endedStatus = async (runId: string): Promise<string | undefined> => {
    const run = await this.getRun(runId).catch(() => undefined);
    return run === undefined || run.status === 'RUNNING' ? undefined : run.status;
  };

  /**
   * Pending approvals (or those with another status). A pending approval of a run that has ended
   * (cancelled, timed out, failed in another branch) waits for nobody, so it is not listed.
   */
  listApprovals(status: ApprovalRecordView['status'] = 'PENDING'): Promise<ApprovalRecordView[]> {
    return listApprovals(this.runtime, status, this.#endedStatus);
  }

  /**
   * Approves or rejects (approvals.ts: the rules every face decides by). `delivered` is false when
   * no execution waits on the token now: the run takes the decision when its execution resumes.
   */
  async decideApproval(
    approvalId: string,
    decision: ApprovalDecision,
    comment?: string,
    by: 'cli' | 'api' = 'cli',
  ): Promise<{ approval: ApprovalRecordView; delivered: boolean }> {
    const { approval, delivered } = await decideApproval(this.runtime, approvalId, decision, {
      by,
      ...(comment !== undefined ? { comment } : {}),
      endedStatusOf: this.#endedStatus,
    });
    return { approval, delivered };
  }

  /** Resumes watching every RUNNING run (the owner calls this at start-up, after the engine resumed them). */
  async watchRunning(): Promise<void> {
    for (const run of await this.runs.listRuns({ status: 'RUNNING', limit: 1000 })) void this.wait(run.runId).catch(() => undefined);
  }
}

/**
 * A fork's parent, which must have ended: a fork of a running run would do its unfinished steps
 * while the run itself goes on doing them (on AWS, redriving a running execution is refused too).
 */
function ended(run: RunRecordView, fork: 'retry' | 'restart'): RunRecordView {
  if (run.status !== 'RUNNING') return run;
  throw new StepforgeError('run_running', `run '${run.runId}' is still running; ${fork} forks a run that has ended`, {
    hint: `wait for it to end, or cancel it: stepforge runs cancel ${run.runId} (POST /runs/{id}/cancel on stepforge serve); a run left running by a process that ended goes on in the next one that holds the stack`,
    details: { runId: run.runId, status: run.status },
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
