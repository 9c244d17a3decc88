// What a state's code receives from the execution that runs it: the thread its events chain on,
// the state being run, and the execution's services (history, context object, bindings, timers,
// nested state machines). Each state type in states/ is written against this interface only.
import type { JsonataBindings } from './jsonataFields.js';
import type { MapRun, MapRunListener } from './MapRun.js';
import type { PathEnv } from './pathEnv.js';
import type { Scope } from './Scope.js';
import type { Clock, ContextObject, QueryLanguage, TaskInvoker } from './types.js';

export type Obj = Record<string, unknown>;

/** One chain of history events (the top level, a Parallel branch, a Map iteration). */
export interface Thread {
  prev: number;
  /** The last state output and its JSON text, reused for the next StateEntered input. */
  lastValue?: unknown;
  lastText?: string;
  /**
   * When the last state on this thread exited, until the next one enters (which takes it as its
   * entry time) or something that takes real time (a checkpoint) clears it.
   */
  exitedAt?: number;
  /** Events of a distributed Map's child executions are not part of this history. */
  silent?: boolean;
}

/** Where a run of states happens: its variables, events, abort signal and query language. */
export interface Frame {
  readonly scope: Scope;
  readonly thread: Thread;
  readonly signal: AbortSignal;
  readonly ql: QueryLanguage;
  readonly top: boolean;
  readonly mapItem?: { Index: number; Value: unknown };
  /** Inside a Parallel branch, an uncaught Task failure is recorded as TaskStateAborted (as AWS does). */
  readonly parallelBranch?: boolean;
}

/** How a Map Run runs one item: its run, the signal that stops it, and the kind of child execution. */
export interface MapItemRun {
  readonly mapRun: MapRun;
  readonly signal: AbortSignal;
  readonly express: boolean;
}

/** A state's output and the state to run next (none at the end of a state machine). */
export interface StepResult {
  output: unknown;
  next?: string;
}

/** One entry into a state. */
export interface StateRun {
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

/** Runs one state type; synchronous where it can be (JSONPath states without timers or tasks). */
export type StateHandler = (ctx: ExecutionContext, run: StateRun, raw: unknown) => StepResult | Promise<StepResult>;

/** Raised when the execution is stopped (StopExecution) or its signal aborts. */
export class Aborted extends Error {
  override readonly name = 'Aborted';
}

/**
 * The reason internal timer controllers are aborted with: giving one spares building an
 * AbortError DOMException (with its stack trace) every time a task or an execution ends.
 */
export const TIMERS_DONE = Symbol('timers-done');

/**
 * The `…Details: { truncated: false }` of every event that carries a payload, shared: a history
 * keeps one per event otherwise, and every object it keeps is copied by the garbage collector.
 */
export const NOT_TRUNCATED: Readonly<{ truncated: false }> = Object.freeze({ truncated: false });

/** Max bytes of a state's input/output (AWS quota). */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

/** JSON text as AWS records it in history events (`null` for a missing value). */
export const json = (v: unknown): string => (v === undefined ? 'null' : JSON.stringify(v));

/** The JSON type name AWS uses in "unexpected result type" messages. */
export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** The services an execution offers the states it runs. */
export interface ExecutionContext {
  readonly clock: Clock;
  readonly invoker: TaskInvoker;
  readonly region: string;
  /** The state machine's ARN (a distributed Map's run ARN is derived from it). */
  readonly stateMachineArn: string;
  /** The execution's ARN (a Map Run records the execution that started it). */
  readonly executionArn: string;
  /** Told when a distributed Map's run starts and ends (the executions layer keeps the Map Run records). */
  readonly mapRuns?: MapRunListener;
  /** A new task token for a `.waitForTaskToken` resource. */
  newTaskToken(): string;
  /** Writes a history event on the thread; `advance: false` leaves the thread's chain where it was. Returns the event id. */
  emit(thread: Thread, type: string, details?: Obj, advance?: boolean): number;
  /** The context object (`$$`, `$states.context`) for the state being run. */
  context(run: StateRun): ContextObject;
  /** What JSONPath expressions of the state can see besides its input. */
  pathEnv(run: StateRun): PathEnv;
  /** The variables and `$states` for a JSONata expression of the state. */
  bindings(run: StateRun, input: unknown, extra?: Obj): JsonataBindings;
  /** Leaves the state with its output: the size check, the variables it assigns, the StateExited event. */
  exit(run: StateRun, output: unknown, assigned?: Obj): void;
  /** Runs the states of a (nested) state machine from `startAt` to its end; resolves with the last output. */
  runStates(machine: Obj, startAt: string, input: unknown, frame: Frame): Promise<unknown>;
  /**
   * Runs one item of a Map Run as a child workflow execution (its own ARN, context object and
   * history) of the ItemProcessor; resolves with its output, rejects with its failure, or with
   * Aborted when it was stopped.
   */
  runMapItem(processor: Obj, input: unknown, item: MapItemRun): Promise<unknown>;
  /** Waits `ms` on the execution's clock; rejects with Aborted when the frame's signal aborts. */
  sleep(run: StateRun, ms: number): Promise<void>;
}
