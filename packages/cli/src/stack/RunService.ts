import { randomUUID } from 'node:crypto';
import { PutItemCommand, QueryCommand, ScanCommand, UpdateItemCommand, type AttributeValue, type QueryCommandOutput, type ScanCommandOutput } from '@aws-sdk/client-dynamodb';
import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
    StartExecutionCommand,
  StopExecutionCommand,
  type DescribeExecutionCommandOutput,
  type HistoryEvent,
} from '@aws-sdk/client-sfn';
import { applyInputSchema } from '@stepforge/compiler';
import { MAX_INPUT_DEPTH, RUN_META_KEY, StepforgeError, executionInputSizeError, inputDepthError } from '@stepforge/contract';
import { isSfnApiError } from '@stepforge/engine';
import { readableCause } from '../progress/readableCause.js';
import { computeStepProgress, type StepProgress } from '../progress/StepProgress.js';
import { baseStepId, stepProgressFromRecords } from '../progress/stepProgressFromRecords.js';
import type { EmbeddedStack } from './EmbeddedStack.js';
import { loadFunctionsRuntime, type ApprovalRecordView, type RunRecordView, type RunEventView, type StepRecordView } from './functionsRuntime.js';
import { WorkflowCatalog, downstreamSet, type WorkflowEntry } from './WorkflowCatalog.js';

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

/** What settling a run needs to know about its execution (DescribeExecution's fields). */
interface ExecutionEnd { readonly status?: string; readonly output?: string; readonly error?: string; readonly cause?: string; readonly stopDate?: Date | number }

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs on the embedded stack: start (idempotent by key), wait, inspect, fork (`retry`, `restart
 * --from`), cancel, and approvals. A run is one Step Functions execution named by the run id; the
 * run record in DynamoDB is written before the execution starts and settled when it ends. Forks are
 * new runs whose steps find the parent's committed results under their own idempotency keys, so
 * the handlers return them instead of running again.
 */
export class RunService {
  readonly catalog: WorkflowCatalog;
  readonly #watching = new Map<string, Promise<RunRecordView>>();
  /** Runs this service started and has not settled yet: wait() needs no read to know them. */
  readonly #started = new Map<string, RunRecordView>();

  constructor(readonly stack: EmbeddedStack, projectDir: string, env: Readonly<Record<string, string | undefined>> = process.env) {
    // The caller's STEPFORGE_POLICY, else the one the stack was opened with in this process.
    const policyEnv = env.STEPFORGE_POLICY || stack.policyFromEnv === undefined ? env : { ...env, STEPFORGE_POLICY: stack.policyFromEnv };
    this.catalog = new WorkflowCatalog(stack.sfn, stack.runtime.db.client, stack.runtime.db.tableName, projectDir, policyEnv);
  }

  get runs() {
    return this.stack.runtime.runs;
  }

  /** Validates the input against the workflow's `input:` schema (StepforgeError `invalid_input`). */
  validateInput(entry: WorkflowEntry, input: unknown): Record<string, unknown> {
    return applyInputSchema(entry.inputSchema, input);
  }

  /** Starts a run of a registered workflow; the same idempotency key returns the same run. */
  async start(entry: WorkflowEntry, input: unknown, options: StartOptions = {}): Promise<StartedRun> {
    // Before anything walks it: input nested deeper than a run record can hold would overflow
    // the recursive code on the way (and DynamoDB would refuse the record).
    const tooDeep = options.validated ? undefined : inputDepthError(input);
    if (tooDeep !== undefined) throw new StepforgeError('input_too_deep', tooDeep, { hint: 'flatten the input, or pass the nested data by reference (a file path or URL)', details: { limit: MAX_INPUT_DEPTH } });
    const value = options.validated ? (input as Record<string, unknown>) : this.validateInput(entry, input);
    const runId = options.runId ?? randomUUID();
    // The execution ARN follows from the state machine and the run id, so the run record carries
    // it from the start (no second write after StartExecution).
    const executionArn = `${entry.stateMachineArn.replace(':stateMachine:', ':execution:')}:${runId}`;
    const meta = {
      ...(options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
      ...(options.parentRunId !== undefined ? { parentRunId: options.parentRunId } : {}),
    };
    const executionInput = JSON.stringify({ ...value, [RUN_META_KEY]: meta });
    // Refused before anything is stored: StartExecution would refuse it after the run was recorded.
    const tooLarge = executionInputSizeError(executionInput);
    if (tooLarge !== undefined) {
      throw new StepforgeError('input_too_large', tooLarge, { hint: 'pass large data by reference (a file path, a URL, an S3 key) in the input rather than inline' });
    }
    const fr = await loadFunctionsRuntime();
    const { run, reused } = await this.runs.startRun({
      workflow: entry.name,
      ...(entry.displayName !== undefined ? { workflowDisplayName: entry.displayName } : {}),
      runId,
      executionArn,
      startedBy: fr.runStarter(),
      ...(options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
      ...(options.parentRunId !== undefined ? { parentRunId: options.parentRunId } : {}),
      ...(entry.version !== undefined ? { workflowVersion: entry.version } : {}),
      ...(entry.policy !== undefined ? { policy: entry.policy } : {}),
      input: value,
    });
    // Our own earlier attempt at this start (options.runId): go on where it stopped.
    const again = reused && options.runId !== undefined && run.runId === options.runId;
    if (reused && !again) {
      const completed = await this.#completeOrphan(entry, run, value, executionInput, options.idempotencyKey);
      if (completed !== undefined) return completed;
      return this.#replay(entry, run, value, options.idempotencyKey);
    }
    if (options.parentRunId !== undefined) await this.#carryOver(options.parentRunId, run.runId, options.rerun ?? new Set());
    // Between the record and the execution: a process that ends here leaves an orphaned start,
    // which whoever finds it completes or fails (#completeOrphan, #failOrphan).
    fr.crashPoint('after-run-record', `run ${run.runId}`);
    try {
      await this.#startExecution({ stateMachineArn: entry.stateMachineArn, name: run.runId, input: executionInput });
    } catch (e) {
      // The earlier attempt started it, and it has ended since (a running one is returned as is).
      if (!(again && (e as Error).name === 'ExecutionAlreadyExists')) {
        // Only a refusal fails the run (orphanedStart.ts, startRefused): after a lost connection
        // the execution may have started, and the run is left for whoever finds it to resolve.
        if (this.stack.engine !== undefined || fr.startRefused(e)) await this.runs.finishRun(run.runId, { status: 'FAILED', error: { name: (e as Error).name, message: (e as Error).message } });
        throw e;
      }
    }
    const started = run;
    this.#started.set(run.runId, run);
    if (this.stack.owner) void this.wait(run.runId).catch(() => undefined);
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
  async #completeOrphan(entry: WorkflowEntry, run: RunRecordView, value: Record<string, unknown>, executionInput: string, key: string | undefined): Promise<StartedRun | undefined> {
    const fr = await loadFunctionsRuntime();
    if (fr.idempotencyKeyConflict(key, run, entry.name) !== undefined || run.parentRunId !== undefined) return undefined;
    const failed = fr.failedBeforeStart(run);
    if (!failed) {
      if (run.status !== 'RUNNING' || !fr.isOrphanedStart(run)) return undefined;
      if (await this.describeExecution(run.executionArn ?? this.#executionArn(run))) return undefined;
    }
    if (fr.inputDiffers(this.stack.runtime.redactor, value, run.input)) {
      if (!failed) await this.#failOrphan(run);
      return undefined;
    }
    const taken = await this.runs.takeOverStart(run, { to: 'start', starter: fr.runStarter() });
    if (taken === undefined) return undefined;
    await this.#startExecution({ stateMachineArn: entry.stateMachineArn, name: run.runId, input: executionInput }).catch((e: unknown) => {
      // Another finder of the same orphan started it with the same input meanwhile.
      if ((e as Error).name !== 'ExecutionAlreadyExists') throw e;
    });
    this.#started.set(taken.runId, taken);
    if (this.stack.owner) void this.wait(taken.runId).catch(() => undefined);
    return { run: taken, reused: false };
  }

  /**
   * Fails an orphaned start (orphanedStart.ts) found RUNNING with no execution: its starter ended
   * before starting it, so nothing of it ran. Returns the run as it is now (failed here, or as
   * another finder or its starter left it).
   */
  async #failOrphan(run: RunRecordView): Promise<RunRecordView> {
    const fr = await loadFunctionsRuntime();
    const failed = await this.runs.takeOverStart(run, { to: 'fail', error: fr.notStartedError(run) });
    this.#started.delete(run.runId);
    return failed ?? (await this.#record(run.runId));
  }

  /** `run` found RUNNING with no execution: failed when it is an orphaned start, else as it is. */
  async #orphanOrRunning(run: RunRecordView): Promise<RunRecordView> {
    const fr = await loadFunctionsRuntime();
    return fr.isOrphanedStart(run) ? this.#failOrphan(run) : run;
  }

  /**
   * The run an idempotency key already names. A key names one run: one of another workflow is
   * StepforgeError `idempotency_key_conflict` (returning it would answer for the wrong workflow).
   * The same workflow's run comes back as it is, with `inputDiffers` when it was started with
   * another input (compared as stored, secrets redacted), so the caller can say so.
   */
  async #replay(entry: WorkflowEntry, run: RunRecordView, value: Record<string, unknown>, key: string | undefined): Promise<StartedRun> {
    const fr = await loadFunctionsRuntime();
    const conflict = fr.idempotencyKeyConflict(key, run, entry.name);
    if (conflict !== undefined) {
      throw new StepforgeError('idempotency_key_conflict', conflict, {
        hint: 'an idempotency key names one run: use another key for this workflow',
        details: { runId: run.runId, workflow: run.workflow },
      });
    }
    const differs = fr.inputDiffers(this.stack.runtime.redactor, value, run.input);
    return { run, reused: true, ...(differs ? { inputDiffers: true } : {}) };
  }

  /**
   * StartExecution. The owning process hands the request to its engine's ExecutionManager, the
   * code the Step Functions API server runs for it, without the HTTP round trip and the SDK
   * pipeline (one of the 13 requests of a 5-step run); its API errors keep their names
   * (`ExecutionAlreadyExists`, …) as the SDK's would. Other processes go through the API.
   */
  async #startExecution(req: { stateMachineArn: string; name: string; input: string }): Promise<void> {
    const engine = this.stack.engine;
    if (!engine) {
      await this.stack.sfn.send(new StartExecutionCommand(req));
      return;
    }
    try {
      engine.manager.startExecution(req);
    } catch (e) {
      if (isSfnApiError(e)) throw Object.assign(new Error(e.message), { name: e.type });
      throw e;
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
    const d = await this.describeExecution(run.executionArn ?? this.#executionArn(run));
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
    const arn = run.executionArn ?? this.#executionArn(run);
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
      if (this.stack.closed) {
        throw new StepforgeError('stack_closed', `the stack closed while run '${runId}' was running; it goes on when a command of this project holds the stack again`, {
          hint: `start stepforge serve again, or follow it with: stepforge runs show ${runId}`,
          details: { runId },
        });
      }
      await sleep(d ? 20 : 10);
    }
  }

  /**
   * The execution's state once it has ended (or now, if it is not running here), or undefined when
   * it does not exist (yet). The owning process asks its engine, which resolves when the execution
   * ends, instead of polling DescribeExecution; other processes poll the Step Functions API.
   */
  async #executionEnd(executionArn: string): Promise<ExecutionEnd | undefined> {
    const engine = this.stack.engine;
    if (!engine) return this.describeExecution(executionArn);
    try {
      return await engine.manager.waitForExecution(executionArn);
    } catch (e) {
      // The engine's own error (SfnApiError) carries the API error name as `type`.
      if ((e as { type?: string }).type === 'ExecutionDoesNotExist') return undefined;
      throw e;
    }
  }

  /**
   * A run's output as a person reads it: outputs that travelled by reference (`{"$ref"}`, a large
   * step output, or a for_each iteration's beyond its smaller inline limit) replaced by the stored
   * values, as the steps that read them received them.
   */
  async readableOutput(output: unknown): Promise<unknown> {
    return this.stack.runtime.blobs.resolveRefs(output);
  }

  /**
   * A run's details as a person reads them (`runs show`, the HTTP API): its output with the values of
   * outputs that travelled by reference; a value whose stored copy cannot be read stays the reference.
   */
  async readableDetails(runId: string): Promise<RunDetails> {
    const found = await this.details(runId);
    if (found.run.output === undefined) return found;
    const output = await this.readableOutput(found.run.output).catch(() => found.run.output);
    return { ...found, run: { ...found.run, output } };
  }

  /** DescribeExecution, or undefined when it does not exist (yet). */
  async describeExecution(executionArn: string): Promise<DescribeExecutionCommandOutput | undefined> {
    try {
      return await this.stack.sfn.send(new DescribeExecutionCommand({ executionArn }));
    } catch (e) {
      if ((e as { name?: string }).name === 'ExecutionDoesNotExist') return undefined;
      throw e;
    }
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

  #executionArn(run: RunRecordView): string {
    return `arn:aws:states:us-east-1:123456789012:execution:${run.workflow}:${run.runId}`;
  }

  /** The execution history (every page). */
  async history(executionArn: string): Promise<HistoryEvent[]> {
    const out: HistoryEvent[] = [];
    let nextToken: string | undefined;
    do {
      const r = await this.stack.sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, ...(nextToken ? { nextToken } : {}) }));
      out.push(...(r.events ?? []));
      nextToken = r.nextToken;
    } while (nextToken);
    return out;
  }

  /** Per-step progress of a run, from its execution history. */
  async progress(run: RunRecordView, entry?: WorkflowEntry): Promise<{ steps: StepProgress[]; history: HistoryEvent[]; execution?: DescribeExecutionCommandOutput }> {
    const wf = entry ?? (await this.catalog.forRun(run));
    const arn = run.executionArn ?? this.#executionArn(run);
    const execution = await this.describeExecution(arn);
    const history = execution ? await this.history(arn) : [];
    const steps = wf ? computeStepProgress(wf.steps, history, execution ?? { status: run.status }) : [];
    return { steps, history, ...(execution ? { execution } : {}) };
  }

  /** A run with its steps (records and progress) and history. */
  async details(runId: string): Promise<RunDetails> {
    const run = await this.getRun(runId);
    const wf = await this.catalog.forRun(run);
    const [{ steps, history }, records, events] = await Promise.all([this.progress(run, wf), this.runs.listSteps(runId), this.runs.listEvents(runId)]);
    // No history (the execution was dropped after the retention period, or its history cannot be
    // read): the steps as their records in DynamoDB tell it, rather than every one "skipped".
    if (history.length === 0 && records.length > 0 && wf) return { run, steps: stepProgressFromRecords(wf.steps, records, run.status), records, history, events };
    return { run, steps, records, history, events };
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
    const started = await this.start(entry, await this.#parentInput(parent), { parentRunId: parent.runId, rerun, validated: true, ...fork });
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
      throw new StepforgeError('run_running', `run '${runId}' is still running; resolve records the outcome of a step of a run that has ended`, {
        hint: `wait for it to end, or cancel it: stepforge runs cancel ${runId}`,
        details: { runId },
      });
    }
    const rt = this.stack.runtime;
    const items: { stepId: string; item: Record<string, AttributeValue> }[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const r: QueryCommandOutput = await rt.db.client.send(new QueryCommand({
        TableName: rt.db.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :step)',
        ExpressionAttributeValues: { ':pk': { S: `RUN#${runId}` }, ':step': { S: 'STEP#' } },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }));
      for (const item of r.Items ?? []) items.push({ stepId: (item.sk?.S ?? '').slice('STEP#'.length), item });
      start = r.LastEvaluatedKey;
    } while (start);
    const named = items.filter((x) => x.stepId === step || baseStepId(x.stepId) === step);
    if (named.length === 0) {
      const known = [...new Set(items.map((x) => baseStepId(x.stepId)))].sort();
      throw new StepforgeError('unknown_step', `run '${runId}' has no step '${step}'${known.length > 0 ? ` (its steps: ${known.join(', ')})` : ''}`, {
        hint: `stepforge runs show ${runId} lists its steps`,
        details: { runId, step },
      });
    }
    const unknown = named.filter((x) => x.item.idem?.M?.status?.S === 'INPROGRESS' && x.item.idem.M.dispatchedAt !== undefined);
    if (unknown.length === 0) {
      const status = named.map((x) => `${x.stepId} ${x.item.status?.S ?? 'pending'}`).join(', ');
      throw new StepforgeError('nothing_to_resolve', `step '${step}' of run '${runId}' has no call whose outcome is unknown (${status}); only a step that failed with StepOutcomeUnknown is resolved by hand`, {
        hint: `to run the unfinished steps again: stepforge runs retry ${runId}`,
        details: { runId, step },
      });
    }
    if (unknown.length > 1) {
      throw new StepforgeError('ambiguous_step', `step '${step}' of run '${runId}' has ${unknown.length} calls whose outcome is unknown: ${unknown.map((x) => x.stepId).join(', ')}`, {
        hint: `resolve them one by one: --step ${unknown[0]!.stepId}`,
        details: { runId, step, instances: unknown.map((x) => x.stepId) },
      });
    }
    const { stepId, item } = unknown[0]!;
    const key = item.idem!.M!.key!.S!;
    const target = item.idem!.M!.dispatchTarget?.S ?? 'an external service';
    const record = await rt.idempotency.getRecord(key);
    if (!record || record.status !== 'INPROGRESS') {
      throw new StepforgeError('nothing_to_resolve', `step '${stepId}' of run '${runId}' was settled meanwhile (${record?.status ?? 'no record'})`, { details: { runId, step: stepId } });
    }
    // Committed as the step itself commits (executeStep): the output (a large one as a blob), no tokens used.
    const stored = await rt.blobs.maybeStore(rt.redactor.redact(output), rt.config.inlineOutputMaxBytes);
    const usage = { inputTokens: 0, outputTokens: 0 };
    const committed = { output: stored.value, ...(stored.ref ? { outputRef: stored.ref } : {}), usage, extra: { resolvedByHand: true } };
    const nowMs = rt.config.clock();
    await rt.idempotency.saveSuccess(key, {
      leaseId: record.leaseId, output: committed, nowMs, ttlSeconds: rt.config.idempotencyTtlSeconds,
      step: { output: stored.value, ...(stored.ref ? { outputRef: stored.ref.ref } : {}), usage },
    });
    // The failure it recorded is no longer the step's state.
    await rt.db.client.send(new UpdateItemCommand({
      TableName: rt.db.tableName,
      Key: { pk: { S: `RUN#${runId}` }, sk: { S: `STEP#${stepId}` } },
      UpdateExpression: 'REMOVE #error',
      ExpressionAttributeNames: { '#error': 'error' },
    }));
    await rt.runs.recordEvent({ runId, stepId, type: 'StepResolved', detail: { message: `the outcome of ${target} was recorded by hand as done`, target } });
    return { run, stepId, target };
  }

  /** Stops a run read as RUNNING (StopExecution) and waits until its record settles. */
  async stop(run: RunRecordView, reason = 'cancelled by the user'): Promise<RunRecordView> {
    try {
      await this.stack.sfn.send(new StopExecutionCommand({ executionArn: run.executionArn ?? this.#executionArn(run), error: 'Cancelled', cause: reason }));
    } catch (e) {
      if ((e as { name?: string }).name !== 'ExecutionDoesNotExist') throw e;
      // No execution: an orphaned start (failed now: nothing of it ran), or one its live starter
      // is about to start, which cannot be stopped before it exists.
      const now = await this.#orphanOrRunning(await this.#record(run.runId));
      if (TERMINAL.has(now.status)) return now;
      throw new StepforgeError('run_not_started', `run '${run.runId}' has no execution yet: ${now.startedBy ?? 'the process starting it'} is starting it`, {
        hint: `run the cancel again in a moment: stepforge runs cancel ${run.runId}`,
        details: { runId: run.runId },
      });
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
    if (!entry) throw new StepforgeError('unknown_workflow', `workflow '${run.workflow}' of run '${run.runId}' is not registered; run its file once to register it`);
    if (run.workflowVersion !== undefined && entry.version !== run.workflowVersion) {
      const ran = await this.catalog.get(run.workflow, run.workflowVersion);
      const from = (e: WorkflowEntry | undefined) => (e?.file !== undefined ? ` (from ${e.file})` : '');
      throw new StepforgeError('workflow_changed',
        `run '${run.runId}' ran another version of workflow '${run.workflow}'${from(ran)} than the one registered now${from(entry)} at ${entry.updatedAt}; ${fork} runs the workflow as registered now, so it cannot re-run that run's steps`,
        {
          hint: `to ${fork} it, bring back the workflow as the run ran it (the file as it was) and run that file once, which registers it again; or start a new run of the workflow as it is now`,
          details: { runId: run.runId, workflow: run.workflow, ranVersion: run.workflowVersion, currentVersion: entry.version ?? null },
        });
    }
    return entry;
  }

  /** The parent's input as the execution saw it (unredacted), without the run metadata. */
  async #parentInput(run: RunRecordView): Promise<Record<string, unknown>> {
    const d = await this.describeExecution(run.executionArn ?? this.#executionArn(run));
    const raw = d?.input !== undefined ? safeJson(d.input) : run.input;
    const { [RUN_META_KEY]: _meta, ...rest } = (raw ?? {}) as Record<string, unknown>;
    return rest;
  }

  /**
   * Copies the parent's committed step results (idempotency records) to the fork's keys, except
   * for the steps being re-run. Step keys are `<run>:<step instance>:<hash of what it was asked>`,
   * so a carried-over step whose inputs are unchanged finds its result and does not run again.
   * Records kept on step records go to the fork's step items (with no step status, so they show
   * only once the step is reached); records on IDEM# items (another key of the same instance,
   * or stores written before step records kept them) go to the fork's step item when it has none.
   */
  async #carryOver(parentRunId: string, runId: string, rerun: ReadonlySet<string>): Promise<number> {
    const db = this.stack.runtime.db;
    const fr = await loadFunctionsRuntime();
    const placed = new Set<string>();
    let copied = 0;
    const fork = (key: string) => `${runId}:${key.slice(parentRunId.length + 1)}`;
    const put = (item: Record<string, AttributeValue>) => db.client.send(new PutItemCommand({ TableName: db.tableName, Item: item }));
    let start: Record<string, AttributeValue> | undefined;
    do {
      const r: QueryCommandOutput = await db.client.send(new QueryCommand({
        TableName: db.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :step)',
        FilterExpression: 'idem.#status = :done',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':pk': { S: `RUN#${parentRunId}` }, ':step': { S: 'STEP#' }, ':done': { S: 'COMPLETED' } },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }));
      for (const item of r.Items ?? []) {
        const idem = item.idem?.M;
        const key = idem?.key?.S;
        const sk = item.sk?.S ?? '';
        if (!idem || !key?.startsWith(`${parentRunId}:`) || rerun.has(baseStepId(sk.slice('STEP#'.length)))) continue;
        await put({ pk: { S: `RUN#${runId}` }, sk: { S: sk }, idem: { M: { ...idem, key: { S: fork(key) } } } });
        placed.add(sk);
        copied++;
      }
      start = r.LastEvaluatedKey;
    } while (start);
    do {
      const r: ScanCommandOutput = await db.client.send(new ScanCommand({
        TableName: db.tableName,
        FilterExpression: 'runId = :run AND begins_with(pk, :idem) AND #status = :done',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':run': { S: parentRunId }, ':idem': { S: 'IDEM#' }, ':done': { S: 'COMPLETED' } },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }));
      for (const item of r.Items ?? []) {
        const key = item.key?.S;
        const instance = item.stepId?.S ?? '';
        if (!key?.startsWith(`${parentRunId}:`) || rerun.has(baseStepId(instance))) continue;
        const newKey = fork(key);
        const at = fr.parseStepKey(newKey);
        const sk = at ? `STEP#${at.stepId}` : undefined;
        if (at && sk && !placed.has(sk)) {
          const { pk: _pk, sk: _sk, ttl: _ttl, runId: _run, stepId: _step, ...record } = item;
          await put({ pk: { S: `RUN#${runId}` }, sk: { S: sk }, idem: { M: { ...record, key: { S: newKey } } } });
          placed.add(sk);
        } else {
          await put({ ...item, pk: { S: `IDEM#${newKey}` }, key: { S: newKey }, runId: { S: runId } });
        }
        copied++;
      }
      start = r.LastEvaluatedKey;
    } while (start);
    await this.runs.recordEvent({ runId, type: 'fork', detail: { parentRunId, carriedOver: copied, rerun: [...rerun].sort() } });
    return copied;
  }

  /**
   * Pending approvals (or those with another status). A pending approval of a run that has ended
   * (cancelled, timed out, failed in another branch) waits for nobody, so it is not listed.
   */
  async listApprovals(status: ApprovalRecordView['status'] = 'PENDING'): Promise<ApprovalRecordView[]> {
    const list = await this.stack.runtime.approvals.list(status);
    if (status !== 'PENDING') return list;
    return (await loadFunctionsRuntime()).approvalsOfOpenRuns(list, async (id) => {
      const run = await this.getRun(id).catch(() => undefined);
      return run?.status === 'RUNNING' ? undefined : run?.status;
    });
  }

  /**
   * Approves or rejects through the runtime's resolveApproval (the same code the AWS approvals
   * handler runs): an approval runs the gated tool call and returns its result through the task
   * token; a rejection fails the waiting step with `ApprovalRejected`. `delivered` is false when
   * no execution waits on the token now: the run takes the decision when its execution resumes.
   */
  async decideApproval(approvalId: string, decision: 'APPROVED' | 'REJECTED', comment?: string, by: 'cli' | 'api' = 'cli'): Promise<{ approval: ApprovalRecordView; delivered: boolean }> {
    const approvals = this.stack.runtime.approvals;
    const existing = await approvals.get(approvalId);
    if (!existing) throw new StepforgeError('unknown_approval', `no approval with id '${approvalId}'`, { hint: "'stepforge approvals list' shows the pending ones" });
    if (existing.status !== 'PENDING') throw approvalDecided(approvalId, existing.status);
    const run = await this.getRun(existing.runId).catch(() => undefined);
    const fr = await loadFunctionsRuntime();
    if (run && run.status !== 'RUNNING') {
      throw new StepforgeError('run_ended', fr.runEndedMessage(run.runId, run.status, approvalId), {
        hint: `'stepforge runs show ${run.runId}' shows what happened; 'stepforge runs retry ${run.runId}' runs its unfinished steps again`,
      });
    }
    // The runtime decides (one conditional update) and answers the waiting task token: an
    // approval runs the gated tool call here and returns its result; a rejection fails the step.
    try {
      // The record as decided, not read again: a process connected to the stack would find no
      // table once the decision ended the run and with it the `stepforge run` holding the stack.
      const { record, delivered } = await fr.resolveApprovalRecord(this.stack.runtime, approvalId, decision, by, comment);
      return { approval: record, delivered };
    } catch (e) {
      // Another decision won the conditional update since the read above (two deciders at once).
      const status = (e as { name?: string; details?: { status?: string } }).details?.status;
      if ((e as { name?: string }).name === 'PolicyDenied' && status !== undefined && status !== 'PENDING') throw approvalDecided(approvalId, status);
      throw e;
    }
  }

  /** Resumes watching every RUNNING run (the owner calls this at start-up, after the engine resumed them). */
  async watchRunning(): Promise<void> {
    for (const run of await this.runs.listRuns({ status: 'RUNNING', limit: 1000 })) void this.wait(run.runId).catch(() => undefined);
  }
}

function approvalDecided(approvalId: string, status: string): StepforgeError {
  return new StepforgeError('approval_decided', `approval '${approvalId}' was already decided: ${status}`);
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
