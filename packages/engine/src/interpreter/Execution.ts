// One run of a state machine: the loop from state to state, the history events, the context
// object, checkpoints and resumes, the execution's time-out and the history quota. What each
// state type does lives in states/, Retry/Catch in retryCatch.ts, input/output in stateIo.ts.
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { systemClock } from './clocks.js';
import type { JsonataBindings } from './jsonataFields.js';
import type { MapRunListener } from './MapRun.js';
import type { PathEnv } from './pathEnv.js';
import { withRetryCatch } from './retryCatch.js';
import { Scope } from './Scope.js';
import { RuntimeFailure, stateFailure } from './StateError.js';
import { checkSize } from './stateIo.js';
import { runChoice } from './states/Choice.js';
import { runFail } from './states/Fail.js';
import { runMap } from './states/Map.js';
import { runParallel } from './states/Parallel.js';
import { runPass } from './states/Pass.js';
import { runSucceed } from './states/Succeed.js';
import { runTask } from './states/Task.js';
import { runWait } from './states/Wait.js';
import { isTaskFailure, TaskFailure, toFailure } from './TaskFailure.js';
import {
  Aborted,
  NOT_TRUNCATED,
  TIMERS_DONE,
  json,
  type ExecutionContext,
  type Frame,
  type MapItemRun,
  type Obj,
  type StateHandler,
  type StateRun,
  type StepResult,
  type Thread,
} from './ExecutionContext.js';
import type {
  AslDefinition,
  Checkpoint,
  Clock,
  ContextObject,
  ExecuteOptions,
  ExecutionResult,
  HistoryEvent,
  QueryLanguage,
  TaskInvoker,
} from './types.js';

/**
 * The stop signal of an execution that nothing can stop: no caller's signal and no TimeoutSeconds.
 * One for all of them, since an AbortController per run costs more than a short run's transitions;
 * every listener a state adds to it is removed when that state settles, and many executions' states
 * may listen at once, so Node's leak warning (past 10 listeners) is off for it.
 */
const NEVER_ABORTED: AbortSignal = new AbortController().signal;
setMaxListeners(0, NEVER_ABORTED);

/** AWS's hard quota of history events per Standard execution. */
export const MAX_HISTORY_EVENTS = 25_000;

interface StateType {
  readonly run: StateHandler;
  /** Task, Map and Parallel run under Retry and Catch (and their context object has State.RetryCount). */
  readonly retryCatch: boolean;
  /** `<Type>StateEntered` / `<Type>StateExited`, spelled once rather than at every transition. */
  readonly entered: string;
  readonly exited: string;
}

const stateType = (type: string, run: StateHandler, retryCatch: boolean): StateType => ({
  run,
  retryCatch,
  entered: `${type}StateEntered`,
  exited: `${type}StateExited`,
});

/** Each state type's code. */
const STATE_TYPES: Readonly<Record<string, StateType>> = {
  Pass: stateType('Pass', runPass, false),
  Succeed: stateType('Succeed', runSucceed, false),
  Fail: stateType('Fail', runFail, false),
  Choice: stateType('Choice', runChoice, false),
  Wait: stateType('Wait', runWait, false),
  Task: stateType('Task', runTask, true),
  Map: stateType('Map', runMap, true),
  Parallel: stateType('Parallel', runParallel, true),
};

/** `$states` for JSONata; the context object is built only when an expression reads it. */
class StatesBinding {
  readonly input: unknown;
  declare readonly context: ContextObject;
  constructor(input: unknown, makeContext: () => ContextObject, extra?: Obj) {
    this.input = input;
    // An own, enumerable getter: the jsonata package reads only own properties when it walks
    // `$states.context…` (a prototype getter reads as undefined), and building the context only
    // when an expression asks for it keeps plain Pass states cheap.
    let ctx: ContextObject | undefined;
    Object.defineProperty(this, 'context', { enumerable: true, get: () => (ctx ??= makeContext()) });
    if (extra) Object.assign(this, extra);
  }
}

/** What JSONPath expressions see; the context object (`$$`) is built only when a path reads it. */
class LazyPathEnv implements PathEnv {
  #context?: ContextObject;
  constructor(
    readonly scope: Scope,
    private readonly makeContext: () => ContextObject,
  ) {}
  get context(): ContextObject {
    return (this.#context ??= this.makeContext());
  }
}

/** How many more events one clock read may stamp within a synchronous run of states (see Execution.eventTime). */
const STAMP_REUSE = 7;
/** Past this many characters of a state's output, the event after it reads the clock again. */
const STAMP_REUSE_MAX_TEXT = 4096;

export class Execution implements ExecutionContext {
  readonly events: HistoryEvent[] = [];
  readonly clock: Clock;
  readonly invoker: TaskInvoker;
  readonly region: string;
  readonly stateMachineArn: string;
  readonly executionArn: string;
  readonly mapRuns?: MapRunListener;
  private counter = 0;
  private transitions = 0;
  /** The last clock read for an event's timestamp, and how many more events may take it (see eventTime). */
  private stampAt = 0;
  private stampLeft = 0;
  private readonly collect: boolean;
  private readonly hasListener: boolean;
  /** Standard executions stop at AWS's 25,000-event history quota (so a runaway loop ends). */
  private readonly historyLimit: number;
  /** No one reads events (collectEvents: false, no onEvent): ids are still counted, nothing is built. */
  private readonly quiet: boolean;
  /** What stops the execution (the caller's signal, or the time-out), when anything can. */
  private readonly abort?: AbortController;
  private readonly signal: AbortSignal;
  private readonly execCtx: ContextObject['Execution'];
  private readonly smCtx: ContextObject['StateMachine'];
  /** The last top-level state entered, with its input, variables and transition count: a failed run's redrive point. */
  private redriveAt?: { stateName: string; input: unknown; variables: Readonly<Obj>; transitions: number };
  private readonly topScope = new Scope();
  private readonly startTime: number;

  constructor(
    private readonly def: AslDefinition,
    private readonly input: unknown,
    private readonly opts: ExecuteOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
    this.collect = opts.collectEvents !== false;
    this.hasListener = opts.onEvent !== undefined;
    this.quiet = !this.collect && !opts.onEvent;
    this.historyLimit = opts.stateMachineType === 'EXPRESS' ? Number.POSITIVE_INFINITY : (opts.maxHistoryEvents ?? MAX_HISTORY_EVENTS);
    this.region = opts.region ?? 'us-east-1';
    const partition = opts.partition ?? 'aws';
    const account = opts.account ?? '123456789012';
    const smName = opts.stateMachineName ?? 'StateMachine';
    const execName = opts.executionName ?? randomUUID();
    this.stateMachineArn = opts.stateMachineArn ?? `arn:${partition}:states:${this.region}:${account}:stateMachine:${smName}`;
    const execArn = opts.executionArn ?? `arn:${partition}:states:${this.region}:${account}:execution:${smName}:${execName}`;
    this.executionArn = execArn;
    if (opts.mapRuns) this.mapRuns = opts.mapRuns;
    this.startTime = opts.startTime ?? this.clock.now();
    this.execCtx = {
      Id: execArn,
      Input: input,
      Name: execName,
      RoleArn: opts.roleArn ?? `arn:${partition}:iam::${account}:role/StepFunctionsRole`,
      StartTime: new Date(this.startTime).toISOString(),
      RedriveCount: opts.redriveCount ?? 0,
    };
    // Express executions cannot be redriven, and their context object has no RedriveCount.
    if (opts.stateMachineType === 'EXPRESS') delete (this.execCtx as Partial<ContextObject['Execution']>).RedriveCount;
    this.smCtx = { Id: this.stateMachineArn, Name: smName };
    this.invoker = opts.invoker ?? {
      invoke: (inv) => Promise.reject(new TaskFailure('States.Runtime', `No task invoker is configured for resource ${inv.resource}`)),
    };
    // Only a time-out needs a controller of its own; otherwise the caller's signal is the execution's
    // (a distributed Map's thousands of child executions would each make one for nothing).
    if (typeof def.TimeoutSeconds === 'number') {
      const abort = (this.abort = new AbortController());
      const s = opts.signal;
      if (s?.aborted) abort.abort(s.reason);
      else s?.addEventListener('abort', () => abort.abort(s.reason), { once: true });
    }
    this.signal = this.abort?.signal ?? opts.signal ?? NEVER_ABORTED;
  }

  newTaskToken(): string {
    return this.opts.newTaskToken?.() ?? randomUUID();
  }

  emit(thread: Thread, type: string, details?: Obj, advance = true): number {
    return this.record(thread, type, details === undefined ? undefined : detailsKey(type), details, advance);
  }

  /** Writes an event whose details key is already known (`emit` looks it up by type). */
  private record(thread: Thread, type: string, key: string | undefined, details: Obj | undefined, advance: boolean): number {
    if (thread.silent) return thread.prev;
    const id = ++this.counter;
    if (this.quiet) {
      if (advance) thread.prev = id;
      return id;
    }
    const ev: HistoryEvent = { timestamp: this.eventTime(0), type, id, previousEventId: thread.prev };
    if (key !== undefined) ev[key] = details;
    if (advance) thread.prev = id;
    this.push(ev);
    return id;
  }

  /**
   * An event's timestamp. A clock read costs 50-60 ns on the build machine's virtual clock source,
   * a quarter of a Pass state's whole transition, and events are stamped in milliseconds: so one read
   * serves up to STAMP_REUSE events of one synchronous run of states. It is never kept past an await
   * (a microtask drops it: any await lets one run before the code after it), nor for an event after
   * a state whose output took more than STAMP_REUSE_MAX_TEXT characters (a state that may have
   * worked for a while), so a timestamp is at most a few small states' work behind the clock.
   */
  private eventTime(outputChars: number): number {
    if (this.stampLeft > 0 && outputChars < STAMP_REUSE_MAX_TEXT) {
      this.stampLeft--;
      return this.stampAt;
    }
    if (this.stampLeft === 0) queueMicrotask(this.dropStamp);
    this.stampAt = this.clock.now();
    this.stampLeft = STAMP_REUSE;
    return this.stampAt;
  }

  private readonly dropStamp = (): void => {
    this.stampLeft = 0;
  };

  private push(ev: HistoryEvent): void {
    if (this.collect) this.events.push(ev);
    if (this.hasListener) this.opts.onEvent!(ev);
  }

  async run(): Promise<ExecutionResult> {
    const thread: Thread = { prev: 0 };
    const topQl = (this.def.QueryLanguage as QueryLanguage | undefined) ?? 'JSONPath';
    const frame: Frame = { scope: this.topScope, thread, signal: this.signal, ql: topQl, top: true };
    let startName = this.def.StartAt as string;
    let startInput = this.input;
    const resume = this.opts.resumeFrom ?? this.opts.redriveFrom;
    if (resume) {
      this.counter = resume.eventCounter;
      thread.prev = resume.previousEventId;
      this.transitions = resume.transitions;
      this.topScope.assign(resume.variables);
      startName = resume.stateName;
      startInput = resume.input;
      if (this.opts.redriveFrom) this.emit(thread, 'ExecutionRedriven', { redriveCount: this.execCtx.RedriveCount });
    } else {
      this.emit(thread, 'ExecutionStarted', { input: json(this.input), inputDetails: NOT_TRUNCATED, roleArn: this.execCtx.RoleArn }, false);
    }
    let result: ExecutionResult;
    // The definition's top-level TimeoutSeconds bounds the whole execution (counted from its start, across resumes).
    // Only a definition with a time-out has a timer to cancel (an AbortController per run is not free).
    const timer = typeof this.def.TimeoutSeconds === 'number' ? new AbortController() : undefined;
    let timedOut = false;
    if (timer && typeof this.def.TimeoutSeconds === 'number') {
      const ms = this.startTime + this.def.TimeoutSeconds * 1000 - this.clock.now();
      void this.clock.sleep(Math.max(0, ms), timer.signal).then(() => {
        if (timer.signal.aborted) return;
        timedOut = true;
        this.abort?.abort({ error: 'States.Timeout' });
      });
    }
    try {
      const output = await this.runStates(this.def, startName, startInput, frame);
      this.emit(thread, 'ExecutionSucceeded', { output: json(output), outputDetails: NOT_TRUNCATED });
      result = this.result('SUCCEEDED', { output });
    } catch (e) {
      if (e instanceof Aborted || (this.signal.aborted && !isTaskFailure(e))) {
        const reason = this.signal.reason as { error?: string; cause?: string } | undefined;
        const d: Obj = {};
        if (typeof reason?.error === 'string') d.error = reason.error;
        if (typeof reason?.cause === 'string') d.cause = reason.cause;
        this.emit(thread, timedOut ? 'ExecutionTimedOut' : 'ExecutionAborted', d);
        result = this.result(timedOut ? 'TIMED_OUT' : 'ABORTED', d as { error?: string; cause?: string });
      } else {
        const f = toFailure(e);
        const d: Obj = {};
        // An empty Error (a Fail state without one) is left out of ExecutionFailed.
        if (f.error !== '') d.error = f.error;
        if (f.cause !== undefined) d.cause = f.cause;
        this.emit(thread, 'ExecutionFailed', d);
        result = this.result('FAILED', d as { error?: string; cause?: string });
      }
      if (this.redriveAt) {
        result.redrivePoint = {
          ...this.redriveAt,
          variables: this.redriveAt.variables as Obj,
          eventCounter: this.counter,
          previousEventId: this.counter,
        };
      }
    } finally {
      timer?.abort(TIMERS_DONE);
    }
    return result;
  }

  private result(status: ExecutionResult['status'], r: { output?: unknown; error?: string; cause?: string }): ExecutionResult {
    const out: ExecutionResult = { status, events: this.events, startTime: this.startTime, stopTime: this.clock.now() };
    if ('output' in r) out.output = r.output;
    if (r.error !== undefined) out.error = r.error;
    if (r.cause !== undefined) out.cause = r.cause;
    return out;
  }

  async runStates(machine: Obj, startAt: string, input: unknown, frame: Frame): Promise<unknown> {
    const states = machine.States as Record<string, Obj>;
    let name = startAt;
    let cur = input;
    for (;;) {
      if (frame.signal.aborted) throw new Aborted();
      if (this.counter >= this.historyLimit) {
        throw new TaskFailure('States.Runtime', `The execution reached the maximum number of history events (${this.historyLimit}).`);
      }
      if (frame.top) this.noteRedrivePoint(name, cur, frame);
      let r = this.runState(name, states[name]!, cur, frame);
      if (r instanceof Promise) r = await r;
      this.transitions++;
      if (r.next === undefined) return r.output;
      name = r.next;
      cur = r.output;
      if (frame.top && this.opts.checkpoint) {
        await this.opts.checkpoint(this.checkpointAt(name, cur, frame));
        // Time passed writing the checkpoint: the next state's entry reads the clock again.
        frame.thread.exitedAt = undefined;
      }
    }
  }

  /** Enters a state, runs its type's code (synchronously when it can), and turns its failures into AWS's. */
  private runState(name: string, st: Obj, raw: unknown, frame: Frame): StepResult | Promise<StepResult> {
    const type = STATE_TYPES[st.Type as string];
    const run = this.enter(name, st, raw, frame, type);
    let r: StepResult | Promise<StepResult>;
    try {
      if (type === undefined) throw new RuntimeFailure('States.Runtime', `Unsupported state type ${String(st.Type)}`);
      r = type.retryCatch ? withRetryCatch(this, run, raw, type.run) : type.run(this, run, raw);
    } catch (e) {
      throw this.failed(run, e);
    }
    return r instanceof Promise ? r.catch((e: unknown) => Promise.reject(this.failed(run, e))) : r;
  }

  private failed(run: StateRun, e: unknown): unknown {
    // A Wait cut short by a stop or a failing sibling branch is recorded as aborted (Task/Map/Parallel do it in withRetryCatch).
    if (e instanceof Aborted && run.st.Type === 'Wait') this.emit(run.frame.thread, 'WaitStateAborted');
    return stateFailure(this, run, e);
  }

  private enter(name: string, st: Obj, raw: unknown, frame: Frame, type: StateType | undefined): StateRun {
    const t = frame.thread;
    const prevBeforeEnter = t.prev;
    let enteredId: number;
    let enteredAt: number;
    if (this.quiet || t.silent) {
      enteredId = this.record(t, '', undefined, undefined, true);
      enteredAt = this.clock.now();
    } else {
      const input = t.lastText !== undefined && t.lastValue === raw ? t.lastText : json(raw);
      // The state that just exited on this thread did so at the same moment: only synchronous
      // work (or promise hand-offs) lies between the two events, so its timestamp is reused
      // rather than the clock read twice a transition (a clock read is a syscall on some hosts).
      enteredAt = t.exitedAt ?? this.eventTime(0);
      t.exitedAt = undefined;
      enteredId = ++this.counter;
      // Built as one literal (not through emit's keyed store): the two events of every transition stay on one fast shape.
      const ev: HistoryEvent = {
        timestamp: enteredAt,
        type: type?.entered ?? `${String(st.Type)}StateEntered`,
        id: enteredId,
        previousEventId: prevBeforeEnter,
        stateEnteredEventDetails: { input, inputDetails: NOT_TRUNCATED, name },
      };
      t.prev = enteredId;
      this.push(ev);
    }
    return {
      name,
      st,
      ql: (st.QueryLanguage as QueryLanguage | undefined) ?? frame.ql,
      frame,
      enteredId,
      prevBeforeEnter,
      enteredAt,
      retryCount: 0,
    };
  }

  exit(run: StateRun, output: unknown, assigned?: Obj): void {
    const thread = run.frame.thread;
    // Values are never mutated in place, so an output that is the previous output object needs no new text or size check.
    // (Task results are excluded: an in-process handler may have mutated and returned its event.)
    const same =
      output === thread.lastValue &&
      thread.lastText !== undefined &&
      output !== null &&
      typeof output === 'object' &&
      run.st.Type !== 'Task';
    const text = same ? thread.lastText! : json(output);
    if (!same) checkSize(run, output, text);
    thread.lastValue = output;
    thread.lastText = text;
    const hasAssigned = assigned !== undefined && Object.keys(assigned).length > 0;
    if (hasAssigned) run.frame.scope.assign(assigned);
    if (this.quiet || thread.silent) {
      this.record(thread, '', undefined, undefined, true);
      return;
    }
    const d: Obj = { name: run.name, output: text, outputDetails: NOT_TRUNCATED };
    if (hasAssigned) {
      const av: Obj = {};
      for (const k of Object.keys(assigned)) av[k] = json(assigned[k]);
      d.assignedVariables = av;
      d.assignedVariablesDetails = NOT_TRUNCATED;
    }
    const id = ++this.counter;
    const at = this.eventTime(text.length);
    thread.exitedAt = at;
    const ev: HistoryEvent = {
      timestamp: at,
      type: STATE_TYPES[run.st.Type as string]!.exited,
      id,
      previousEventId: thread.prev,
      stateExitedEventDetails: d,
    };
    thread.prev = id;
    this.push(ev);
  }

  async runMapItem(processor: Obj, input: unknown, item: MapItemRun): Promise<unknown> {
    const run = item.mapRun;
    const name = randomUUID();
    const executionArn = `${run.stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
    const startTime = this.clock.now();
    const sink = item.express
      ? undefined
      : this.mapRuns?.childStarted?.({
          executionArn,
          name,
          stateMachineArn: run.stateMachineArn,
          mapRunArn: run.mapRunArn,
          definition: processor,
          roleArn: this.execCtx.RoleArn,
          input,
          startDate: startTime,
        });
    const o = this.opts;
    const child = new Execution(processor as AslDefinition, input, {
      invoker: this.invoker,
      clock: this.clock,
      region: this.region,
      ...(o.partition !== undefined ? { partition: o.partition } : {}),
      ...(o.account !== undefined ? { account: o.account } : {}),
      roleArn: this.execCtx.RoleArn,
      executionArn,
      executionName: name,
      stateMachineArn: run.stateMachineArn,
      stateMachineName: run.stateMachineArn.slice(run.stateMachineArn.lastIndexOf(':') + 1),
      startTime,
      stateMachineType: item.express ? 'EXPRESS' : 'STANDARD',
      signal: item.signal,
      collectEvents: false,
      ...(sink ? { onEvent: sink.onEvent } : {}),
      ...(o.newTaskToken ? { newTaskToken: o.newTaskToken } : {}),
      ...(o.maxHistoryEvents !== undefined ? { maxHistoryEvents: o.maxHistoryEvents } : {}),
      ...(this.mapRuns ? { mapRuns: this.mapRuns } : {}),
    });
    const r = await child.run();
    sink?.ended(r);
    if (r.status === 'SUCCEEDED') return r.output;
    if (r.status === 'ABORTED') throw new Aborted();
    throw new TaskFailure(r.error ?? '', r.cause);
  }

  async sleep(run: StateRun, ms: number): Promise<void> {
    if (ms > 0) await this.clock.sleep(ms, run.frame.signal);
    if (run.frame.signal.aborted) throw new Aborted();
  }

  context(run: StateRun): ContextObject {
    const entered = new Date(run.enteredAt).toISOString();
    const c: ContextObject = {
      Execution: this.execCtx,
      State: STATE_TYPES[run.st.Type as string]?.retryCatch
        ? { EnteredTime: entered, Name: run.name, RetryCount: run.retryCount }
        : ({ EnteredTime: entered, Name: run.name } as ContextObject['State']),
      StateMachine: this.smCtx,
    };
    if (run.taskToken !== undefined) c.Task = { Token: run.taskToken };
    if (run.frame.mapItem) c.Map = { Item: run.frame.mapItem };
    return c;
  }

  pathEnv(run: StateRun): PathEnv {
    return new LazyPathEnv(run.frame.scope, () => this.context(run));
  }

  bindings(run: StateRun, input: unknown, extra?: Obj): JsonataBindings {
    const b = run.frame.scope.flatten();
    b.states = new StatesBinding(input, () => this.context(run), extra);
    return b;
  }

  /** Keeps where a redrive would start, reusing one object (this runs at every top-level transition). */
  private noteRedrivePoint(name: string, cur: unknown, frame: Frame): void {
    const variables = frame.scope.ownValues();
    const at = this.redriveAt;
    if (at === undefined) this.redriveAt = { stateName: name, input: cur, variables, transitions: this.transitions };
    else {
      at.stateName = name;
      at.input = cur;
      at.variables = variables;
      at.transitions = this.transitions;
    }
  }

  /** The resumable snapshot before top-level state `name` runs with input `cur`. */
  private checkpointAt(name: string, cur: unknown, frame: Frame): Checkpoint {
    return {
      stateName: name,
      input: cur,
      variables: frame.scope.ownValues(),
      eventCounter: this.counter,
      previousEventId: frame.thread.prev,
      transitions: this.transitions,
    };
  }
}

const detailsKeys = new Map<string, string>();

/** The `…EventDetails` key of an event type: ChoiceStateEntered → stateEnteredEventDetails; TaskScheduled → taskScheduledEventDetails. */
function detailsKey(type: string): string {
  let k = detailsKeys.get(type);
  if (k === undefined) {
    const m = /^(Task|Pass|Choice|Wait|Succeed|Fail|Parallel|Map)State(Entered|Exited)$/.exec(type);
    k = m ? `state${m[2]}EventDetails` : type[0]!.toLowerCase() + type.slice(1) + 'EventDetails';
    detailsKeys.set(type, k);
  }
  return k;
}
