// The in-process ASL interpreter: runs any definition (JSONPath or JSONata), writes AWS-shaped
// history events, and reports checkpoints after each top-level transition so a run can resume.
import { randomUUID } from 'node:crypto';
import { compilePath, setAtPath } from '../jsonpath/JsonPath.js';
import { jsonataBody } from '../jsonata/JsonataEvaluator.js';
import { evaluateChoiceRule, parseTimestamp } from './choiceRules.js';
import { systemClock } from './clocks.js';
import { evalField, evalTemplate, type JsonataBindings } from './jsonataFields.js';
import { evaluatePayloadTemplate, lookupPath, requirePath, resolveDollarField, type PathEnv } from './pathEnv.js';
import { Scope } from './Scope.js';
import { RuntimeFailure, runtimeCause } from './StateError.js';
import { isTaskFailure, TaskFailure, toFailure } from './TaskFailure.js';
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
import { assertValidDefinition } from './validateDefinition.js';

type Obj = Record<string, unknown>;

/**
 * The reason internal timer controllers are aborted with: giving one spares building an
 * AbortError DOMException (with its stack trace) every time a task or an execution ends.
 */
const TIMERS_DONE = Symbol('timers-done');

/** AWS's hard quota of history events per Standard execution. */
export const MAX_HISTORY_EVENTS = 25_000;

/** Max bytes of a state's input/output (AWS quota). */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

interface Thread {
  prev: number;
  /** The last state output and its JSON text, reused for the next StateEntered input. */
  lastValue?: unknown;
  lastText?: string;
  /** Events of a distributed Map's child executions are not part of this history. */
  silent?: boolean;
}

interface Frame {
  readonly scope: Scope;
  readonly thread: Thread;
  readonly signal: AbortSignal;
  readonly ql: QueryLanguage;
  readonly top: boolean;
  readonly mapItem?: { Index: number; Value: unknown };
  /** Inside a Parallel branch, an uncaught Task failure is recorded as TaskStateAborted (as AWS does). */
  readonly parallelBranch?: boolean;
}

interface StepResult {
  output: unknown;
  next?: string;
}

interface StateRun {
  readonly name: string;
  readonly st: Obj;
  readonly ql: QueryLanguage;
  readonly frame: Frame;
  readonly enteredId: number;
  readonly prevBeforeEnter: number;
  readonly enteredAt: number;
  retryCount: number;
  taskToken?: string;
}

/** Raised when the execution is stopped (StopExecution) or its signal aborts. */
class Aborted extends Error {
  override readonly name = 'Aborted';
}

const RETRIABLE = new Set(['Task', 'Map', 'Parallel']);

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

const json = (v: unknown): string => (v === undefined ? 'null' : JSON.stringify(v));

/** Runs an ASL definition to completion in-process. Rejects the definition first if it is invalid. */
export async function executeStateMachine(definition: AslDefinition, input: unknown, options: ExecuteOptions = {}): Promise<ExecutionResult> {
  assertValidDefinition(definition);
  if (options.invoker?.supports) assertSupportedResources(definition, options.invoker);
  return new Execution(definition, input, options).run();
}

/** A definition checked once and run many times: each run skips the definition checks. */
export interface PreparedStateMachine {
  /** The machine's own copy of the definition, taken when it was checked (later edits to the original do not reach it). */
  readonly definition: AslDefinition;
  /** Runs the checked definition (the invoker's supported resources are still checked on every run). */
  execute(input: unknown, options?: ExecuteOptions): Promise<ExecutionResult>;
}

/** Checks a definition once (throws InvalidDefinition as executeStateMachine does) for many runs. */
export function prepareStateMachine(definition: AslDefinition): PreparedStateMachine {
  const checked = structuredClone(definition);
  assertValidDefinition(checked);
  return {
    definition: checked,
    execute(input: unknown, options: ExecuteOptions = {}): Promise<ExecutionResult> {
      if (options.invoker?.supports) assertSupportedResources(checked, options.invoker);
      return new Execution(checked, input, options).run();
    },
  };
}

/** Every Task Resource (in branches and Map processors too) with its JSON-pointer location. */
export function taskResources(machine: Obj, at = ''): { resource: string; path: string }[] {
  const out: { resource: string; path: string }[] = [];
  for (const [name, st] of Object.entries((machine.States as Record<string, Obj> | undefined) ?? {})) {
    const p = `${at}/States/${name}`;
    if (st.Type === 'Task' && typeof st.Resource === 'string') out.push({ resource: st.Resource, path: `${p}/Resource` });
    if (Array.isArray(st.Branches)) (st.Branches as Obj[]).forEach((b, i) => out.push(...taskResources(b, `${p}/Branches/${i}`)));
    const proc = (st.ItemProcessor ?? st.Iterator) as Obj | undefined;
    if (proc) out.push(...taskResources(proc, `${p}/${st.ItemProcessor ? 'ItemProcessor' : 'Iterator'}`));
  }
  return out;
}

/** Fails before the run (InvalidDefinition, code UNSUPPORTED_RESOURCE) when the invoker cannot run a Task's resource. */
export function assertSupportedResources(definition: AslDefinition, invoker: TaskInvoker): void {
  const errors = [];
  for (const { resource, path } of taskResources(definition)) {
    const why = invoker.supports?.(resource);
    if (why !== undefined) errors.push({ code: 'UNSUPPORTED_RESOURCE', message: why, path });
  }
  if (errors.length === 0) return;
  const e = new Error(`Invalid State Machine Definition: ${errors.map((x) => `'${x.code}: ${x.message} at ${x.path}'`).join(', ')}`);
  e.name = 'InvalidDefinition';
  (e as Error & { errors: unknown }).errors = errors;
  throw e;
}

class Execution {
  readonly events: HistoryEvent[] = [];
  private counter = 0;
  private transitions = 0;
  private readonly clock: Clock;
  private readonly collect: boolean;
  /** Standard executions stop at AWS's 25,000-event history quota (so a runaway loop ends). */
  private readonly historyLimit: number;
  /** No one reads events (collectEvents: false, no onEvent): ids are still counted, nothing is built. */
  private readonly quiet: boolean;
  private readonly abort = new AbortController();
  private readonly execCtx: ContextObject['Execution'];
  private readonly smCtx: ContextObject['StateMachine'];
  private readonly region: string;
  private readonly invoker: TaskInvoker;
  private lastCheckpoint?: Checkpoint;
  private readonly topScope = new Scope();
  private readonly startTime: number;

  constructor(
    private readonly def: AslDefinition,
    private readonly input: unknown,
    private readonly opts: ExecuteOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
    this.collect = opts.collectEvents !== false;
    this.quiet = !this.collect && !opts.onEvent;
    this.historyLimit = opts.stateMachineType === 'EXPRESS' ? Number.POSITIVE_INFINITY : (opts.maxHistoryEvents ?? MAX_HISTORY_EVENTS);
    this.region = opts.region ?? 'us-east-1';
    const partition = opts.partition ?? 'aws';
    const account = opts.account ?? '123456789012';
    const smName = opts.stateMachineName ?? 'StateMachine';
    const execName = opts.executionName ?? randomUUID();
    const smArn = opts.stateMachineArn ?? `arn:${partition}:states:${this.region}:${account}:stateMachine:${smName}`;
    const execArn = opts.executionArn ?? `arn:${partition}:states:${this.region}:${account}:execution:${smName}:${execName}`;
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
    this.smCtx = { Id: smArn, Name: smName };
    this.invoker = opts.invoker ?? {
      invoke: (inv) => Promise.reject(new TaskFailure('States.Runtime', `No task invoker is configured for resource ${inv.resource}`)),
    };
    if (opts.signal) {
      const s = opts.signal;
      if (s.aborted) this.abort.abort(s.reason);
      else s.addEventListener('abort', () => this.abort.abort(s.reason), { once: true });
    }
  }

  private emit(thread: Thread, type: string, details?: Obj, advance = true): number {
    if (thread.silent) return thread.prev;
    if (this.quiet) {
      const id = ++this.counter;
      if (advance) thread.prev = id;
      return id;
    }
    const id = ++this.counter;
    const ev: HistoryEvent = { timestamp: this.clock.now(), type, id, previousEventId: thread.prev };
    if (details) ev[detailsKey(type)] = details;
    if (advance) thread.prev = id;
    if (this.collect) this.events.push(ev);
    this.opts.onEvent?.(ev);
    return id;
  }

  async run(): Promise<ExecutionResult> {
    const thread: Thread = { prev: 0 };
    const topQl = (this.def.QueryLanguage as QueryLanguage | undefined) ?? 'JSONPath';
    const frame: Frame = { scope: this.topScope, thread, signal: this.abort.signal, ql: topQl, top: true };
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
      this.emit(thread, 'ExecutionStarted', { input: json(this.input), inputDetails: { truncated: false }, roleArn: this.execCtx.RoleArn }, false);
    }
    let result: ExecutionResult;
    // The definition's top-level TimeoutSeconds bounds the whole execution (counted from its start, across resumes).
    const timer = new AbortController();
    let timedOut = false;
    if (typeof this.def.TimeoutSeconds === 'number') {
      const ms = this.startTime + this.def.TimeoutSeconds * 1000 - this.clock.now();
      void this.clock.sleep(Math.max(0, ms), timer.signal).then(() => {
        if (timer.signal.aborted) return;
        timedOut = true;
        this.abort.abort({ error: 'States.Timeout' });
      });
    }
    try {
      const output = await this.runStates(this.def, startName, startInput, frame);
      this.emit(thread, 'ExecutionSucceeded', { output: json(output), outputDetails: { truncated: false } });
      result = this.result('SUCCEEDED', { output });
    } catch (e) {
      if (e instanceof Aborted || (this.abort.signal.aborted && !isTaskFailure(e))) {
        const reason = this.abort.signal.reason as { error?: string; cause?: string } | undefined;
        const d: Obj = {};
        if (typeof reason?.error === 'string') d.error = reason.error;
        if (typeof reason?.cause === 'string') d.cause = reason.cause;
        this.emit(thread, timedOut ? 'ExecutionTimedOut' : 'ExecutionAborted', d);
        result = this.result(timedOut ? 'TIMED_OUT' : 'ABORTED', d as { error?: string; cause?: string });
      } else {
        const f = toFailure(e);
        const d: Obj = {};
        if (f.error !== undefined && f.error !== '') d.error = f.error;
        if (f.cause !== undefined) d.cause = f.cause;
        if ((e as { fromFailState?: boolean }).fromFailState && f.error === '') delete d.error;
        this.emit(thread, 'ExecutionFailed', d);
        result = this.result('FAILED', d as { error?: string; cause?: string });
      }
      if (this.lastCheckpoint) {
        result.redrivePoint = { ...this.lastCheckpoint, eventCounter: this.counter, previousEventId: this.counter };
      }
    } finally {
      timer.abort(TIMERS_DONE);
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

  private async runStates(machine: Obj, startAt: string, input: unknown, frame: Frame): Promise<unknown> {
    const states = machine.States as Record<string, Obj>;
    let name = startAt;
    let cur = input;
    for (;;) {
      if (frame.signal.aborted) throw new Aborted();
      if (this.counter >= this.historyLimit) {
        throw new TaskFailure('States.Runtime', `The execution reached the maximum number of history events (${this.historyLimit}).`);
      }
      if (frame.top) this.lastCheckpoint = this.checkpointAt(name, cur, frame);
      const st = states[name]!;
      let r = st.Type === 'Pass' ? this.runPassState(name, st, cur, frame) : this.runState(name, st, cur, frame);
      if (r instanceof Promise) r = await r;
      this.transitions++;
      if (r.next === undefined) return r.output;
      name = r.next;
      cur = r.output;
      if (frame.top && this.opts.checkpoint) await this.opts.checkpoint(this.checkpointAt(name, cur, frame));
    }
  }

  private context(run: StateRun): ContextObject {
    const c: ContextObject = {
      Execution: this.execCtx,
      State: RETRIABLE.has(run.st.Type as string)
        ? { EnteredTime: new Date(run.enteredAt).toISOString(), Name: run.name, RetryCount: run.retryCount }
        : ({ EnteredTime: new Date(run.enteredAt).toISOString(), Name: run.name } as ContextObject['State']),
      StateMachine: this.smCtx,
    };
    if (run.taskToken !== undefined) c.Task = { Token: run.taskToken };
    if (run.frame.mapItem) c.Map = { Item: run.frame.mapItem };
    return c;
  }

  private pathEnv(run: StateRun): PathEnv {
    return { context: this.context(run), scope: run.frame.scope };
  }

  private bindings(run: StateRun, input: unknown, extra?: Obj): JsonataBindings {
    const b = run.frame.scope.flatten();
    b.states = new StatesBinding(input, () => this.context(run), extra);
    return b;
  }

  /** Pass states run synchronously when they can (no JSONata, no Assign); otherwise like any state. */
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

  private runPassState(name: string, st: Obj, raw: unknown, frame: Frame): StepResult | Promise<StepResult> {
    if (st.Assign !== undefined || ((st.QueryLanguage as QueryLanguage | undefined) ?? frame.ql) === 'JSONata') return this.runState(name, st, raw, frame);
    const run = this.enter(name, st, raw, frame);
    try {
      return this.runPass(run, raw) as StepResult;
    } catch (e) {
      throw this.finalFailure(run, e);
    }
  }

  private enter(name: string, st: Obj, raw: unknown, frame: Frame): StateRun {
    const type = st.Type as string;
    const prevBeforeEnter = frame.thread.prev;
    const inputText = this.quiet ? '' : frame.thread.lastText !== undefined && frame.thread.lastValue === raw ? frame.thread.lastText : json(raw);
    const enteredId = this.quiet ? this.emit(frame.thread, '') : this.emit(frame.thread, `${type}StateEntered`, { input: inputText, inputDetails: { truncated: false }, name });
    return {
      name,
      st,
      ql: (st.QueryLanguage as QueryLanguage | undefined) ?? frame.ql,
      frame,
      enteredId,
      prevBeforeEnter,
      enteredAt: this.clock.now(),
      retryCount: 0,
    };
  }

  private async runState(name: string, st: Obj, raw: unknown, frame: Frame): Promise<StepResult> {
    const type = st.Type as string;
    const run = this.enter(name, st, raw, frame);
    try {
      switch (type) {
        case 'Pass': {
          const r = this.runPass(run, raw);
          return r instanceof Promise ? await r : r;
        }
        case 'Succeed':
          return await this.runSucceed(run, raw);
        case 'Fail':
          return await this.runFail(run, raw);
        case 'Choice':
          return await this.runChoice(run, raw);
        case 'Wait':
          return await this.runWait(run, raw);
        case 'Task':
        case 'Map':
        case 'Parallel':
          return await this.withRetryCatch(run, raw);
        default:
          throw new RuntimeFailure('States.Runtime', `Unsupported state type ${type}`);
      }
    } catch (e) {
      // A Wait cut short by a stop or a failing sibling branch is recorded as aborted (Task/Map/Parallel do it in withRetryCatch).
      if (e instanceof Aborted && type === 'Wait') this.emit(frame.thread, 'WaitStateAborted');
      throw this.finalFailure(run, e);
    }
  }

  /** Turns a RuntimeFailure into AWS's state-prefixed cause and writes EvaluationFailed for JSONata errors. */
  private finalFailure(run: StateRun, e: unknown): unknown {
    if (e instanceof RuntimeFailure) {
      const cause = runtimeCause(run.name, run.enteredId, e.detail);
      const f = new TaskFailure(e.error, cause);
      if (e.error === 'States.QueryEvaluationError' && !(e as { reported?: boolean }).reported) {
        const d: Obj = { cause, error: e.error, state: run.name };
        if (e.location !== undefined) d.location = e.location;
        // AWS chains EvaluationFailed to the event before StateEntered, except for Wait states.
        if (run.st.Type !== 'Wait') run.frame.thread.prev = run.prevBeforeEnter;
        this.emit(run.frame.thread, 'EvaluationFailed', d);
      }
      return f;
    }
    return e;
  }

  // ---- output processing ------------------------------------------------------------------

  private checkSize(run: StateRun, value: unknown, text?: string): void {
    const s = text ?? json(value);
    if (s.length * 3 > MAX_PAYLOAD_BYTES && Buffer.byteLength(s) > MAX_PAYLOAD_BYTES) {
      throw new TaskFailure('States.DataLimitExceeded', `The state/task '${run.name}' returned a result with a size exceeding the maximum number of bytes service limit.`);
    }
  }

  private inputPath(run: StateRun, raw: unknown): unknown {
    const p = run.st.InputPath;
    if (p === undefined || p === '$') return raw;
    if (p === null) return {};
    return requirePath(p as string, raw, this.pathEnv(run));
  }

  private outputPath(run: StateRun, v: unknown): unknown {
    const p = run.st.OutputPath;
    if (p === undefined || p === '$') return v;
    if (p === null) return {};
    return requirePath(p as string, v, this.pathEnv(run));
  }

  private resultPath(run: StateRun, raw: unknown, result: unknown, fromCatcher?: Obj): unknown {
    const p = fromCatcher ? fromCatcher.ResultPath : run.st.ResultPath;
    if (p === undefined || p === '$') return result;
    if (p === null) return raw;
    try {
      return setAtPath(raw, compilePath(p as string), result);
    } catch (e) {
      throw new RuntimeFailure('States.Runtime', `Invalid path '${String(p)}' : ${(e as Error).message}`);
    }
  }

  /** JSONPath Assign: `.$` fields resolve against `value` (the state's result). */
  private assign(run: StateRun, assignTpl: unknown, value: unknown, jsonataExtra?: Obj, jsonataInput?: unknown): Promise<Obj | undefined> | undefined {
    if (assignTpl === undefined || assignTpl === null) return undefined;
    return this.assignAsync(run, assignTpl, value, jsonataExtra, jsonataInput);
  }

  private async assignAsync(run: StateRun, assignTpl: unknown, value: unknown, jsonataExtra?: Obj, jsonataInput?: unknown): Promise<Obj | undefined> {
    let vals: Obj;
    if (run.ql === 'JSONata') {
      vals = (await evalTemplate(assignTpl, 'Assign', this.bindings(run, jsonataInput, jsonataExtra))) as Obj;
    } else {
      vals = evaluatePayloadTemplate(assignTpl, value, this.pathEnv(run)) as Obj;
    }
    return vals;
  }

  private applyAssign(run: StateRun, vals: Obj | undefined, exitDetails: Obj): void {
    if (!vals || Object.keys(vals).length === 0) return;
    run.frame.scope.assign(vals);
    const av: Obj = {};
    for (const k of Object.keys(vals)) av[k] = json(vals[k]);
    exitDetails.assignedVariables = av;
    exitDetails.assignedVariablesDetails = { truncated: false };
  }

  private exit(run: StateRun, output: unknown, assigned?: Obj): void {
    const thread = run.frame.thread;
    // Values are never mutated in place, so an output that is the previous output object needs no new text or size check.
    // (Task results are excluded: an in-process handler may have mutated and returned its event.)
    const same = output === thread.lastValue && thread.lastText !== undefined && output !== null && typeof output === 'object' && run.st.Type !== 'Task';
    const text = same ? thread.lastText! : json(output);
    if (!same) this.checkSize(run, output, text);
    thread.lastValue = output;
    thread.lastText = text;
    if (this.quiet && !assigned) {
      this.emit(thread, '');
      return;
    }
    const d: Obj = { name: run.name, output: text, outputDetails: { truncated: false } };
    this.applyAssign(run, assigned, d);
    this.emit(run.frame.thread, `${run.st.Type as string}StateExited`, d);
  }

  private next(run: StateRun): string | undefined {
    return run.st.End === true ? undefined : (run.st.Next as string | undefined);
  }

  // ---- simple states ---------------------------------------------------------------------------

  /** JSONPath Pass without Assign needs no await at all: the hot path of long Pass chains. */
  private runPass(run: StateRun, raw: unknown): StepResult | Promise<StepResult> {
    const st = run.st;
    if (run.ql === 'JSONata' || st.Assign !== undefined) return this.runPassAsync(run, raw);
    const eff = this.inputPath(run, raw);
    let result: unknown;
    if ('Result' in st) result = st.Result;
    else if (st.Parameters !== undefined) result = evaluatePayloadTemplate(st.Parameters, eff, this.pathEnv(run));
    else result = eff;
    const output = this.outputPath(run, this.resultPath(run, raw, result));
    this.exit(run, output);
    return { output, next: this.next(run) };
  }

  private async runPassAsync(run: StateRun, raw: unknown): Promise<StepResult> {
    const st = run.st;
    if (run.ql === 'JSONata') {
      const b = this.bindings(run, raw);
      const assigned = await this.assign(run, st.Assign, undefined, undefined, raw);
      const output = st.Output !== undefined ? await evalTemplate(st.Output, 'Output', b) : raw;
      this.exit(run, output, assigned);
      return { output, next: this.next(run) };
    }
    const eff = this.inputPath(run, raw);
    let result: unknown;
    if ('Result' in st) result = st.Result;
    else if (st.Parameters !== undefined) result = evaluatePayloadTemplate(st.Parameters, eff, this.pathEnv(run));
    else result = eff;
    const assigned = await this.assign(run, st.Assign, result);
    const output = this.outputPath(run, this.resultPath(run, raw, result));
    this.exit(run, output, assigned);
    return { output, next: this.next(run) };
  }

  private async runSucceed(run: StateRun, raw: unknown): Promise<StepResult> {
    let output: unknown;
    if (run.ql === 'JSONata') output = run.st.Output !== undefined ? await evalTemplate(run.st.Output, 'Output', this.bindings(run, raw)) : raw;
    else output = this.outputPath(run, this.inputPath(run, raw));
    this.exit(run, output);
    return { output };
  }

  private async runFail(run: StateRun, raw: unknown): Promise<StepResult> {
    const st = run.st;
    let error: unknown = st.Error;
    let cause: unknown = st.Cause;
    if (run.ql === 'JSONata') {
      const b = this.bindings(run, raw);
      if (jsonataBody(error) !== undefined) error = await evalTemplate(error, 'Error', b);
      if (jsonataBody(cause) !== undefined) cause = await evalTemplate(cause, 'Cause', b);
    } else {
      const env = this.pathEnv(run);
      if (typeof st.ErrorPath === 'string') error = this.failPath(st.ErrorPath, 'ErrorPath', raw, env);
      if (typeof st.CausePath === 'string') cause = this.failPath(st.CausePath, 'CausePath', raw, env);
    }
    const f = new TaskFailure(
      error === undefined || error === null ? '' : typeof error === 'string' ? error : json(error),
      cause === undefined || cause === null ? undefined : typeof cause === 'string' ? cause : json(cause),
    );
    (f as { fromFailState?: boolean }).fromFailState = true;
    throw f;
  }

  private failPath(p: string, field: string, raw: unknown, env: PathEnv): unknown {
    return resolveDollarField(p, field, raw, env);
  }

  private async runChoice(run: StateRun, raw: unknown): Promise<StepResult> {
    const st = run.st;
    const choices = (st.Choices as Obj[]) ?? [];
    if (run.ql === 'JSONata') {
      const b = this.bindings(run, raw);
      for (const [i, rule] of choices.entries()) {
        const cond = jsonataBody(rule.Condition);
        const ok = cond !== undefined ? await evalField(cond, `Choices[${i}]/Condition`, b) : rule.Condition;
        if (typeof ok !== 'boolean') {
          throw new RuntimeFailure('States.QueryEvaluationError', `The JSONata expression '${cond}' specified for the field 'Condition' returned an unexpected result type. Expected 'boolean', but was '${typeName(ok)}' for value: ${json(ok)}`, 'Condition');
        }
        if (ok) {
          const assigned = await this.assign(run, rule.Assign, undefined, undefined, raw);
          const output = rule.Output !== undefined ? await evalTemplate(rule.Output, 'Output', b) : raw;
          this.exit(run, output, assigned);
          return { output, next: rule.Next as string };
        }
      }
      if (st.Default === undefined) throw new TaskFailure('States.NoChoiceMatched', `No Matches!`);
      const assigned = await this.assign(run, st.Assign, undefined, undefined, raw);
      const output = st.Output !== undefined ? await evalTemplate(st.Output, 'Output', b) : raw;
      this.exit(run, output, assigned);
      return { output, next: st.Default as string };
    }
    const eff = this.inputPath(run, raw);
    const env = this.pathEnv(run);
    for (const rule of choices) {
      if (evaluateChoiceRule(rule, eff, env)) {
        const assigned = await this.assign(run, rule.Assign, eff);
        const output = this.outputPath(run, eff);
        this.exit(run, output, assigned);
        return { output, next: rule.Next as string };
      }
    }
    if (st.Default === undefined) throw new TaskFailure('States.NoChoiceMatched', `No Matches!`);
    const assigned = await this.assign(run, st.Assign, eff);
    const output = this.outputPath(run, eff);
    this.exit(run, output, assigned);
    return { output, next: st.Default as string };
  }

  private async runWait(run: StateRun, raw: unknown): Promise<StepResult> {
    const st = run.st;
    let ms = 0;
    let eff = raw;
    if (run.ql === 'JSONata') {
      const b = this.bindings(run, raw);
      if (st.Seconds !== undefined) {
        const s = jsonataBody(st.Seconds) !== undefined ? await evalTemplate(st.Seconds, 'Seconds', b) : st.Seconds;
        if (typeof s !== 'number' || !Number.isInteger(s) || s < 0) {
          throw new RuntimeFailure('States.QueryEvaluationError', `The JSONata expression '${jsonataBody(st.Seconds) ?? String(st.Seconds)}' specified for the field 'Seconds' returned an unexpected result type. Expected 'integer', but was '${typeName(s)}' for value: ${json(s)}`, 'Seconds');
        }
        ms = s * 1000;
      } else if (st.Timestamp !== undefined) {
        const t = jsonataBody(st.Timestamp) !== undefined ? await evalTemplate(st.Timestamp, 'Timestamp', b) : st.Timestamp;
        const at = parseTimestamp(t);
        if (Number.isNaN(at)) {
          throw new RuntimeFailure('States.QueryEvaluationError', `The Timestamp field cannot be parsed as an ISO-8601 extended offset date-time format string: ${typeof t === 'string' ? t : json(t)}`, 'Timestamp');
        }
        ms = at - this.clock.now();
      }
      const assigned = await this.assign(run, st.Assign, undefined, undefined, raw);
      const output = st.Output !== undefined ? await evalTemplate(st.Output, 'Output', b) : raw;
      await this.sleep(run, ms);
      this.exit(run, output, assigned);
      return { output, next: this.next(run) };
    }
    eff = this.inputPath(run, raw);
    const env = this.pathEnv(run);
    if (typeof st.Seconds === 'number') ms = st.Seconds * 1000;
    else if (typeof st.SecondsPath === 'string') {
      const s = requirePath(st.SecondsPath, eff, env);
      if (typeof s !== 'number' || !Number.isInteger(s)) {
        throw new RuntimeFailure('States.Runtime', `The SecondsPath parameter cannot be parsed as a long value: ${st.SecondsPath} == ${typeof s === 'string' ? s : json(s)}`);
      }
      if (s < 0) throw new RuntimeFailure('States.Runtime', `The SecondsPath parameter references a negative value: ${st.SecondsPath} == ${s}`);
      ms = s * 1000;
    } else if (typeof st.Timestamp === 'string') ms = parseTimestamp(st.Timestamp) - this.clock.now();
    else if (typeof st.TimestampPath === 'string') {
      const t = requirePath(st.TimestampPath, eff, env);
      const at = parseTimestamp(t);
      if (Number.isNaN(at)) {
        throw new RuntimeFailure('States.Runtime', `The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: ${st.TimestampPath} == ${typeof t === 'string' ? t : json(t)}`);
      }
      ms = at - this.clock.now();
    }
    const assigned = await this.assign(run, st.Assign, eff);
    await this.sleep(run, ms);
    const output = this.outputPath(run, eff);
    this.exit(run, output, assigned);
    return { output, next: this.next(run) };
  }

  private async sleep(run: StateRun, ms: number): Promise<void> {
    if (ms > 0) await this.clock.sleep(ms, run.frame.signal);
    if (run.frame.signal.aborted) throw new Aborted();
  }

  // ---- Retry / Catch --------------------------------------------------------------------------

  private async withRetryCatch(run: StateRun, raw: unknown): Promise<StepResult> {
    const st = run.st;
    const retriers = (st.Retry as Obj[] | undefined) ?? [];
    const catchers = (st.Catch as Obj[] | undefined) ?? [];
    const attempts = new Array<number>(retriers.length).fill(0);
    for (;;) {
      try {
        return await this.attempt(run, raw);
      } catch (e0) {
        if (e0 instanceof Aborted || run.frame.signal.aborted) {
          this.emit(run.frame.thread, `${st.Type as string}StateAborted`);
          throw e0 instanceof Aborted ? e0 : new Aborted();
        }
        let e = e0;
        if (e instanceof RuntimeFailure) {
          e = this.finalFailure(run, e);
          (e as { reported?: boolean }).reported = true;
          if ((e as TaskFailure).error === 'States.Runtime') throw e;
        }
        const f: { error: string; cause?: string; nullError?: boolean; nullCause?: boolean } = toFailure(e);
        if ((e as { nullError?: boolean }).nullError) f.nullError = true;
        if ((e as { nullCause?: boolean }).nullCause) f.nullCause = true;
        const ri = retriers.findIndex((r) => matches(r.ErrorEquals, f.error));
        if (ri >= 0) {
          const r = retriers[ri]!;
          const max = typeof r.MaxAttempts === 'number' ? r.MaxAttempts : 3;
          if (attempts[ri]! < max) {
            const interval = typeof r.IntervalSeconds === 'number' ? r.IntervalSeconds : 1;
            const rate = typeof r.BackoffRate === 'number' ? r.BackoffRate : 2;
            let delay = interval * Math.pow(rate, attempts[ri]!);
            if (typeof r.MaxDelaySeconds === 'number') delay = Math.min(delay, r.MaxDelaySeconds);
            if (r.JitterStrategy === 'FULL') delay = Math.random() * delay;
            attempts[ri]!++;
            run.retryCount++;
            await this.sleep(run, delay * 1000);
            continue;
          }
        }
        this.failedEvent(run);
        const ci = catchers.findIndex((c) => matches(c.ErrorEquals, f.error));
        if (ci < 0) {
          if (run.frame.parallelBranch && st.Type === 'Task') this.emit(run.frame.thread, 'TaskStateAborted', undefined, false);
          throw e;
        }
        return await this.caught(run, raw, catchers[ci]!, f);
      }
    }
  }

  private failedEvent(run: StateRun): void {
    const t = run.st.Type;
    if (t === 'Map' || t === 'Parallel') this.emit(run.frame.thread, `${t as string}StateFailed`);
  }

  private async caught(run: StateRun, raw: unknown, c: Obj, f: { error: string; cause?: string; nullError?: boolean; nullCause?: boolean }): Promise<StepResult> {
    const errorOutput: Obj = { Error: f.nullError ? null : f.error };
    if (f.nullCause) errorOutput.Cause = null;
    else if (f.cause !== undefined) errorOutput.Cause = f.cause;
    else if (f.error === 'States.Timeout' || f.error === 'States.HeartbeatTimeout') errorOutput.Cause = '';
    let output: unknown;
    let assigned: Obj | undefined;
    if (run.ql === 'JSONata') {
      const b = this.bindings(run, raw, { errorOutput });
      assigned = await this.assign(run, c.Assign, undefined, { errorOutput }, raw);
      output = c.Output !== undefined ? await evalTemplate(c.Output, 'Output', b) : errorOutput;
    } else {
      assigned = await this.assign(run, c.Assign, errorOutput);
      output = this.resultPath(run, raw, errorOutput, c);
    }
    this.exit(run, output, assigned);
    return { output, next: c.Next as string };
  }

  private async attempt(run: StateRun, raw: unknown): Promise<StepResult> {
    switch (run.st.Type) {
      case 'Task':
        return this.runTask(run, raw);
      case 'Map':
        return this.runMap(run, raw);
      default:
        return this.runParallel(run, raw);
    }
  }

  /** Shared tail of Task/Map/Parallel: ResultSelector, ResultPath, OutputPath (or Output), Assign. */
  private async finish(run: StateRun, raw: unknown, result: unknown): Promise<StepResult> {
    const st = run.st;
    if (run.ql === 'JSONata') {
      const b = this.bindings(run, raw, { result });
      const assigned = await this.assign(run, st.Assign, undefined, { result }, raw);
      const output = st.Output !== undefined ? await evalTemplate(st.Output, 'Output', b) : result;
      this.exit(run, output, assigned);
      return { output, next: this.next(run) };
    }
    let r = result;
    if (st.ResultSelector !== undefined) r = evaluatePayloadTemplate(st.ResultSelector, r, this.pathEnv(run));
    const assigned = await this.assign(run, st.Assign, r);
    const output = this.outputPath(run, this.resultPath(run, raw, r));
    this.exit(run, output, assigned);
    return { output, next: this.next(run) };
  }

  // ---- Task -------------------------------------------------------------------------------------

  private substitute(resource: string): string {
    return resource;
  }

  private async numberField(run: StateRun, raw: unknown, field: string, eff: unknown): Promise<number | undefined> {
    const st = run.st;
    const v = st[field];
    if (run.ql === 'JSONata' && jsonataBody(v) !== undefined) {
      const n = await evalTemplate(v, field, this.bindings(run, raw));
      if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0) {
        throw new RuntimeFailure('States.QueryEvaluationError', `The JSONata expression '${jsonataBody(v)}' specified for the field '${field}' returned an unexpected result type. Expected 'integer', but was '${typeName(n)}' for value: ${json(n)}`, field);
      }
      return n;
    }
    if (typeof v === 'number') return v;
    const p = st[`${field}Path`];
    if (typeof p === 'string') {
      const n = requirePath(p, eff, this.pathEnv(run));
      if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0) {
        throw new RuntimeFailure('States.Runtime', `The ${field}Path parameter does not reference a positive integer: ${p} == ${json(n)}`);
      }
      return n;
    }
    return undefined;
  }

  private async runTask(run: StateRun, raw: unknown): Promise<StepResult> {
    const st = run.st;
    const resource = this.substitute(st.Resource as string);
    if (resource.endsWith('.waitForTaskToken')) run.taskToken = this.opts.newTaskToken?.() ?? randomUUID();
    let eff: unknown;
    if (run.ql === 'JSONata') {
      eff = st.Arguments !== undefined ? await evalTemplate(st.Arguments, 'Arguments', this.bindings(run, raw)) : raw;
    } else {
      eff = this.inputPath(run, raw);
      if (st.Parameters !== undefined) eff = evaluatePayloadTemplate(st.Parameters, eff, this.pathEnv(run));
    }
    const timeoutSeconds = await this.numberField(run, raw, 'TimeoutSeconds', this.inputPath(run, raw));
    const heartbeatSeconds = await this.numberField(run, raw, 'HeartbeatSeconds', this.inputPath(run, raw));
    const svc = serviceOf(resource);
    const thread = run.frame.thread;
    const effText = json(eff);
    if (svc) {
      const d: Obj = { parameters: effText, region: this.region, resource: svc.resource, resourceType: svc.resourceType };
      if (timeoutSeconds !== undefined) d.timeoutInSeconds = timeoutSeconds;
      if (heartbeatSeconds !== undefined) d.heartbeatInSeconds = heartbeatSeconds;
      this.emit(thread, 'TaskScheduled', d);
      this.emit(thread, 'TaskStarted', { resource: svc.resource, resourceType: svc.resourceType });
    } else {
      const d: Obj = { input: effText, inputDetails: { truncated: false }, resource };
      if (timeoutSeconds !== undefined) d.timeoutInSeconds = timeoutSeconds;
      this.emit(thread, 'LambdaFunctionScheduled', d);
      this.emit(thread, 'LambdaFunctionStarted');
    }
    const ac = new AbortController();
    // One listener on the (possibly shared) outer signal, removed when the task settles.
    let rejectAbort!: (e: unknown) => void;
    const abortP = new Promise<never>((_, reject) => {
      rejectAbort = reject;
    });
    abortP.catch(() => {});
    const onOuter = () => {
      ac.abort();
      rejectAbort(new Aborted());
    };
    if (run.frame.signal.aborted) onOuter();
    else run.frame.signal.addEventListener('abort', onOuter, { once: true });
    let lastBeat = this.clock.now();
    let settled = false;
    const timers: Promise<never>[] = [];
    // Only a task with a timeout or a heartbeat has timers to cancel when it settles.
    const timerAbort = timeoutSeconds !== undefined || heartbeatSeconds !== undefined ? new AbortController() : undefined;
    if (timerAbort && timeoutSeconds !== undefined) {
      timers.push(
        this.clock.sleep(timeoutSeconds * 1000, timerAbort.signal).then(() => {
          throw new TaskFailure('States.Timeout');
        }),
      );
    }
    if (timerAbort && heartbeatSeconds !== undefined) {
      const hbMs = heartbeatSeconds * 1000;
      timers.push(
        (async () => {
          for (;;) {
            await this.clock.sleep(Math.max(1, lastBeat + hbMs - this.clock.now()), timerAbort.signal);
            if (timerAbort.signal.aborted) return new Promise<never>(() => {});
            if (this.clock.now() - lastBeat >= hbMs) throw new TaskFailure('States.HeartbeatTimeout');
          }
        })(),
      );
    }
    let result: unknown;
    try {
      const inv = this.invoker.invoke(
        {
          resource,
          input: eff,
          stateName: run.name,
          ...(run.taskToken !== undefined ? { taskToken: run.taskToken } : {}),
          ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
          ...(heartbeatSeconds !== undefined ? { heartbeatSeconds } : {}),
          signal: ac.signal,
          context: this.context(run),
          ...(st.Credentials !== undefined ? { credentials: st.Credentials } : {}),
          queryLanguage: run.ql,
        },
        {
          heartbeat: () => {
            lastBeat = this.clock.now();
          },
          emit: (e) => {
            const { type, ...rest } = e;
            const keys = Object.keys(rest);
            this.emit(thread, type, keys.length === 1 ? (rest[keys[0]!] as Obj) : undefined);
          },
        },
      );
      result = await Promise.race([inv, abortP, ...timers]);
    } catch (e) {
      settled = true;
      timerAbort?.abort(TIMERS_DONE);
      ac.abort();
      run.frame.signal.removeEventListener('abort', onOuter);
      if (e instanceof Aborted) throw e;
      const f = toFailure(e);
      // SendTaskFailure without error/cause: AWS records null Error/Cause (nullError/nullCause flags).
      const nullError = (e as { nullError?: boolean }).nullError === true;
      const nullCause = (e as { nullCause?: boolean }).nullCause === true;
      const timedOut = f.error === 'States.Timeout' || f.error === 'States.HeartbeatTimeout';
      const d: Obj = svc ? { resource: svc.resource, resourceType: svc.resourceType } : {};
      if (!nullError) d.error = f.error;
      if (f.cause !== undefined && !nullCause) d.cause = f.cause;
      if (svc) this.emit(thread, timedOut ? 'TaskTimedOut' : 'TaskFailed', d);
      else this.emit(thread, timedOut ? 'LambdaFunctionTimedOut' : 'LambdaFunctionFailed', d);
      const failure = new TaskFailure(f.error, f.cause);
      if (nullError) (failure as { nullError?: boolean }).nullError = true;
      if (nullCause) (failure as { nullCause?: boolean }).nullCause = true;
      throw failure;
    }
    void settled;
    timerAbort?.abort(TIMERS_DONE);
    run.frame.signal.removeEventListener('abort', onOuter);
    const outText = json(result);
    if (outText.length * 3 > MAX_PAYLOAD_BYTES && Buffer.byteLength(outText) > MAX_PAYLOAD_BYTES) {
      const label = svc ? svc.resourceType : resource;
      const f = new TaskFailure('States.DataLimitExceeded', `The state/task '${label}' returned a result with a size exceeding the maximum number of bytes service limit.`);
      if (svc) this.emit(thread, 'TaskFailed', { error: f.error, cause: f.cause, resource: svc.resource, resourceType: svc.resourceType });
      else this.emit(thread, 'LambdaFunctionFailed', { error: f.error, cause: f.cause });
      throw f;
    }
    if (svc) this.emit(thread, 'TaskSucceeded', { output: outText, outputDetails: { truncated: false }, resource: svc.resource, resourceType: svc.resourceType });
    else this.emit(thread, 'LambdaFunctionSucceeded', { output: outText, outputDetails: { truncated: false } });
    return this.finish(run, raw, result);
  }

  // ---- Parallel ---------------------------------------------------------------------------------

  private async runParallel(run: StateRun, raw: unknown): Promise<StepResult> {
    const st = run.st;
    let eff: unknown;
    if (run.ql === 'JSONata') {
      eff = st.Arguments !== undefined ? await evalTemplate(st.Arguments, 'Arguments', this.bindings(run, raw)) : raw;
    } else {
      eff = this.inputPath(run, raw);
      if (st.Parameters !== undefined) eff = evaluatePayloadTemplate(st.Parameters, eff, this.pathEnv(run));
    }
    const outer = run.frame.thread;
    const startedId = this.emit(outer, 'ParallelStateStarted');
    const branches = (st.Branches as Obj[]) ?? [];
    const ac = new AbortController();
    const onOuter = () => ac.abort(run.frame.signal.reason);
    run.frame.signal.addEventListener('abort', onOuter, { once: true });
    const results = new Array<unknown>(branches.length);
    let failure: unknown;
    let failedThread: Thread | undefined;
    let lastThread: Thread | undefined;
    await Promise.all(
      branches.map(async (b, i) => {
        const thread: Thread = { prev: startedId };
        const frame: Frame = {
          scope: new Scope(run.frame.scope),
          thread,
          signal: ac.signal,
          ql: (b.QueryLanguage as QueryLanguage | undefined) ?? run.ql,
          top: false,
          parallelBranch: true,
        };
        try {
          results[i] = await this.runStates(b, b.StartAt as string, eff, frame);
          lastThread = thread;
        } catch (e) {
          if (failure === undefined && !(e instanceof Aborted)) {
            failure = e;
            failedThread = thread;
            ac.abort();
          } else if (failure === undefined && run.frame.signal.aborted) {
            failure = e;
          }
        }
      }),
    );
    run.frame.signal.removeEventListener('abort', onOuter);
    if (failure !== undefined) {
      if (failedThread) outer.prev = failedThread.prev;
      throw failure;
    }
    if (lastThread) outer.prev = lastThread.prev;
    this.emit(outer, 'ParallelStateSucceeded', undefined, false);
    return this.finish(run, raw, results);
  }

  // ---- Map --------------------------------------------------------------------------------------

  private async mapNumber(run: StateRun, eff: unknown, raw: unknown, field: string, kind: 'integer' | 'float'): Promise<number | undefined> {
    const st = run.st;
    const v = st[field];
    if (run.ql === 'JSONata' && jsonataBody(v) !== undefined) {
      const n = await evalTemplate(v, field, this.bindings(run, raw));
      if (typeof n !== 'number' || (kind === 'integer' && !Number.isInteger(n))) {
        throw new RuntimeFailure('States.QueryEvaluationError', `The JSONata expression '${jsonataBody(v)}' specified for the field '${field}' returned an unexpected result type. Expected '${kind === 'integer' ? 'integer' : 'number'}', but was '${typeName(n)}' for value: ${json(n)}`, field);
      }
      return n;
    }
    if (typeof v === 'number') return v;
    const p = st[`${field}Path`];
    if (typeof p === 'string') {
      let n = requirePath(p, eff, this.pathEnv(run));
      // Numeric text is accepted, as AWS parses the referenced value.
      if (typeof n === 'string' && n.trim() !== '' && !Number.isNaN(Number(n))) n = Number(n);
      if (typeof n !== 'number' || (kind === 'integer' && !Number.isInteger(n))) {
        throw new RuntimeFailure('States.Runtime', `The ${field}Path field refers to value "${typeof n === 'string' ? n : json(n)}" which is not a valid ${kind}: ${p}`);
      }
      return n;
    }
    return undefined;
  }

  private async runMap(run: StateRun, raw: unknown): Promise<StepResult> {
    const st = run.st;
    const processor = ((st.ItemProcessor ?? st.Iterator) as Obj | undefined) ?? {};
    const mode = ((processor.ProcessorConfig as Obj | undefined)?.Mode as string | undefined) ?? 'INLINE';
    let eff: unknown;
    let items: unknown;
    if (run.ql === 'JSONata') {
      eff = raw;
      if (st.Items !== undefined) {
        const body = jsonataBody(st.Items);
        items = body !== undefined ? await evalField(body, 'Items', this.bindings(run, raw)) : await evalTemplate(st.Items, 'Items', this.bindings(run, raw));
        if (!Array.isArray(items)) {
          throw new RuntimeFailure(
            'States.QueryEvaluationError',
            `The JSONata expression '${body ?? json(st.Items)}' specified for the field 'Items' returned an unexpected result type. Expected 'array', but was '${typeName(items)}' for value: ${json(items)}`,
            'Items',
          );
        }
      } else {
        items = raw;
        if (!Array.isArray(items)) throw new RuntimeFailure('States.QueryEvaluationError', `Map state input must be an array but was: ${json(items)}`);
      }
    } else {
      eff = this.inputPath(run, raw);
      items = typeof st.ItemsPath === 'string' ? requirePath(st.ItemsPath, eff, this.pathEnv(run)) : eff;
      if (!Array.isArray(items)) {
        throw new RuntimeFailure('States.Runtime', `Map state input must be an array but was: ${json(items)}`);
      }
    }
    const list = items as unknown[];
    let maxConc = (await this.mapNumber(run, eff, raw, 'MaxConcurrency', 'integer')) ?? 0;
    if (maxConc < 0) throw new RuntimeFailure('States.Runtime', `MaxConcurrency cannot be negative.`);
    const outer = run.frame.thread;
    const startedId = this.emit(outer, 'MapStateStarted', { length: list.length });
    const tolCount = await this.mapNumber(run, eff, raw, 'ToleratedFailureCount', 'integer');
    if (tolCount !== undefined && tolCount < 0) throw new RuntimeFailure('States.Runtime', 'ToleratedFailureCount cannot be negative.');
    const tolPct = await this.mapNumber(run, eff, raw, 'ToleratedFailurePercentage', 'float');
    if (tolPct !== undefined && (tolPct < 0 || tolPct > 100)) throw new RuntimeFailure('States.Runtime', 'ToleratedFailurePercentage must be between 0 and 100.');
    let chainPrev = startedId;
    const distributed = mode === 'DISTRIBUTED';
    if (distributed) {
      this.emit(outer, 'MapRunStarted', {
        mapRunArn: `${this.smCtx.Id.replace(':stateMachine:', ':mapRun:')}/${typeof st.Label === 'string' ? st.Label : run.name}:${randomUUID()}`,
      });
    }
    const selector = st.ItemSelector ?? st.Parameters;
    const ac = new AbortController();
    const onOuter = () => ac.abort(run.frame.signal.reason);
    run.frame.signal.addEventListener('abort', onOuter, { once: true });
    const results = new Array<unknown>(list.length);
    let failures = 0;
    let failure: unknown;
    let failureThread: Thread | undefined;
    const tolerated = (n: number): boolean => {
      if (tolCount === undefined && tolPct === undefined) return n === 0;
      if (tolCount !== undefined && n <= tolCount) return true;
      if (tolPct !== undefined && list.length > 0 && (n / list.length) * 100 <= tolPct) return true;
      return false;
    };
    const procQl = (processor.QueryLanguage as QueryLanguage | undefined) ?? run.ql;
    const children = new Set<AbortController>();
    // Only processors with states that listen for aborts (Task, Wait, nested Map/Parallel) need per-iteration signals.
    const needsOwnSignal = listensForAbort(processor);
    ac.signal.addEventListener('abort', () => children.forEach((c) => c.abort(ac.signal.reason)), { once: true });
    let nextIndex = 0;
    const runOne = async (index: number): Promise<void> => {
      const value = list[index];
      let itemInput: unknown = value;
      if (selector !== undefined) {
        const itemRun: StateRun = { ...run, frame: { ...run.frame, mapItem: { Index: index, Value: value } } };
        itemInput =
          run.ql === 'JSONata'
            ? await evalTemplate(selector, 'ItemSelector', this.bindings(itemRun, raw))
            : evaluatePayloadTemplate(selector, eff, this.pathEnv(itemRun));
      }
      const thread: Thread = { prev: chainPrev, silent: distributed || run.frame.thread.silent };
      if (!distributed) this.emit(thread, 'MapIterationStarted', { index, name: run.name });
      // Each iteration gets its own signal so tasks inside add listeners to a short list, not one shared by 10k iterations.
      const child = needsOwnSignal ? new AbortController() : undefined;
      if (child) children.add(child);
      const frame: Frame = { scope: new Scope(run.frame.scope), thread, signal: child ? child.signal : ac.signal, ql: procQl, top: false };
      try {
        results[index] = await this.runStates(processor, processor.StartAt as string, itemInput, frame);
        chainPrev = thread.prev;
        if (!distributed) outer.prev = this.emit(thread, 'MapIterationSucceeded', { index, name: run.name }, false);
      } catch (e) {
        if (e instanceof Aborted) {
          if (!distributed) this.emit(thread, 'MapIterationAborted', { index, name: run.name }, false);
          return;
        }
        if (!distributed) this.emit(thread, 'MapIterationFailed', { index, name: run.name }, false);
        outer.prev = thread.prev;
        failures++;
        const f = toFailure(e);
        results[index] = { Error: f.error, ...(f.cause !== undefined ? { Cause: f.cause } : {}) };
        if (!tolerated(failures) && failure === undefined) {
          failure = tolCount === undefined && tolPct === undefined ? e : new TaskFailure('States.ExceedToleratedFailureThreshold', 'The specified tolerated failure threshold was exceeded');
          failureThread = thread;
          ac.abort();
        }
      } finally {
        if (child) children.delete(child);
      }
    };
    const width = maxConc === 0 ? list.length : Math.min(maxConc, list.length);
    const worker = async (): Promise<void> => {
      while (nextIndex < list.length && failure === undefined && !ac.signal.aborted) {
        await runOne(nextIndex++);
      }
    };
    const workers: Promise<void>[] = [];
    for (let w = 0; w < width; w++) workers.push(worker());
    try {
      await Promise.all(workers);
    } finally {
      run.frame.signal.removeEventListener('abort', onOuter);
    }
    if (run.frame.signal.aborted) throw new Aborted();
    if (failure !== undefined) {
      if (failureThread) outer.prev = failureThread.prev;
      if (distributed) this.emit(outer, 'MapRunFailed');
      throw failure;
    }
    if (distributed) this.emit(outer, 'MapRunSucceeded');
    this.emit(outer, 'MapStateSucceeded', undefined, false);
    return this.finish(run, raw, results);
  }
}

const listenerCache = new WeakMap<object, boolean>();

function listensForAbort(machine: Obj): boolean {
  let v = listenerCache.get(machine);
  if (v === undefined) {
    v = Object.values((machine.States as Record<string, Obj> | undefined) ?? {}).some((st) => ['Task', 'Wait', 'Map', 'Parallel'].includes(st.Type as string));
    listenerCache.set(machine, v);
  }
  return v;
}

function matches(errorEquals: unknown, error: string): boolean {
  if (!Array.isArray(errorEquals)) return false;
  for (const e of errorEquals) {
    if (e === error) return true;
    if (e === 'States.ALL' && error !== 'States.Runtime') return true;
    if (e === 'States.TaskFailed' && error !== 'States.Timeout' && error !== 'States.Runtime' && error !== 'States.HeartbeatTimeout' && error !== 'States.DataLimitExceeded' && !error.startsWith('States.Branch') && error !== 'States.QueryEvaluationError') return true;
  }
  return false;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** `arn:aws:states:::lambda:invoke(.waitForTaskToken)` → {resourceType: lambda, resource: invoke(.waitForTaskToken)}; undefined for function ARNs. */
export function serviceOf(resource: string): { resourceType: string; resource: string } | undefined {
  const m = /^arn:[^:]+:states:[^:]*:[^:]*:([^:]+):(.+)$/.exec(resource);
  if (!m) return undefined;
  const [, service, action] = m;
  if (service === 'activity') return undefined;
  // arn:aws:states:::aws-sdk:dynamodb:putItem → resourceType "aws-sdk:dynamodb", resource "putItem".
  if (service === 'aws-sdk') {
    const i = action!.indexOf(':');
    if (i > 0) return { resourceType: `aws-sdk:${action!.slice(0, i)}`, resource: action!.slice(i + 1) };
  }
  return { resourceType: service!, resource: action! };
}

const detailsKeys = new Map<string, string>();

function detailsKey(type: string): string {
  let k = detailsKeys.get(type);
  if (k === undefined) {
    k = computeDetailsKey(type);
    detailsKeys.set(type, k);
  }
  return k;
}

function computeDetailsKey(type: string): string {
  // ChoiceStateEntered → stateEnteredEventDetails; TaskScheduled → taskScheduledEventDetails.
  const m = /^(Task|Pass|Choice|Wait|Succeed|Fail|Parallel|Map)State(Entered|Exited)$/.exec(type);
  if (m) return `state${m[2]}EventDetails`;
  return type[0]!.toLowerCase() + type.slice(1) + 'EventDetails';
}

/** Reads the lookup helper for external callers (kept here so tests can probe path semantics). */
export { lookupPath };
