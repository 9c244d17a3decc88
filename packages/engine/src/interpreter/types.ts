// Contract of the in-process ASL interpreter. Engine engineer 2 (executions manager, API server,
// non-Lambda resources) codes against these types: keep them stable and additive.

import type { MapRunListener } from './MapRun.js';

/** An ASL definition as parsed JSON (validated by `validateDefinition` before a run). */
export type AslDefinition = Record<string, unknown>;

/** The query language of a state or a whole definition. */
export type QueryLanguage = 'JSONPath' | 'JSONata';

/** The context object (`$$` in JSONPath, `$states.context` in JSONata). */
export interface ContextObject {
  Execution: {
    Id: string;
    Input: unknown;
    Name: string;
    RoleArn: string;
    StartTime: string;
    RedriveCount: number;
    RedriveTime?: string;
  };
  State: { EnteredTime: string; Name: string; RetryCount: number };
  StateMachine: { Id: string; Name: string };
  Task?: { Token: string };
  Map?: { Item: { Index: number; Value: unknown; Key?: string; Source?: string } };
}

/** A history event as GetExecutionHistory returns it (timestamp in epoch milliseconds). */
export interface HistoryEvent {
  timestamp: number;
  type: string;
  id: number;
  previousEventId: number;
  /** Exactly one `<camelCaseType>EventDetails` key for event types that carry details. */
  [details: string]: unknown;
}

/** An event a task resource wants to add to the history (ids and timestamp are filled in). */
export interface HistoryEventInput {
  type: string;
  [details: string]: unknown;
}

/** One call of a Task state's resource. */
export interface TaskInvocation {
  /** The Resource after `${Name}` substitution, e.g. `arn:aws:states:::lambda:invoke`. */
  resource: string;
  /** The effective task input: the result of Parameters/Arguments (or the state input). */
  input: unknown;
  stateName: string;
  /** Set for `.waitForTaskToken` resources; the invoker resolves when SendTaskSuccess/Failure arrives. */
  taskToken?: string;
  timeoutSeconds?: number;
  heartbeatSeconds?: number;
  /** Aborted when the task times out, the execution stops, or a sibling branch fails. */
  signal: AbortSignal;
  context: ContextObject;
  credentials?: unknown;
  /** The query language the state uses (JSONata tasks get `Arguments`). */
  queryLanguage: QueryLanguage;
}

/** Callbacks a resource may use while it runs. */
export interface TaskHooks {
  /** Resets the HeartbeatSeconds timer. */
  heartbeat(): void;
  /** Adds an event to the history (e.g. TaskSubmitted). */
  emit(event: HistoryEventInput): void;
}

/**
 * Runs Task resources. Resolve with the task result; reject with a TaskFailure-shaped error
 * (`{error|name: string, cause?: string}`) to fail the state with that Error/Cause.
 */
export interface TaskInvoker {
  invoke(invocation: TaskInvocation, hooks: TaskHooks): Promise<unknown>;
  /** Optional check before the run: return a message when the resource is not supported. */
  supports?(resource: string): string | undefined;
}

/** Time source; tests use an instant clock so Wait/Retry take no real time. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Serialisable snapshot taken after each completed top-level transition. */
export interface Checkpoint {
  /** The state to run next. */
  stateName: string;
  /** That state's input. */
  input: unknown;
  /** Top-level variables (JSONata/Assign) at that point. */
  variables: Record<string, unknown>;
  /** Id of the last history event written so far (the next event gets eventCounter + 1). */
  eventCounter: number;
  /** Id of the event the next state's first event follows. */
  previousEventId: number;
  /** How many state transitions have happened (for the 25,000-event quota and stats). */
  transitions: number;
}

/** Where an execution ended. */
export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

/** The outcome of executeStateMachine. */
export interface ExecutionResult {
  status: Exclude<ExecutionStatus, 'RUNNING'>;
  /** The execution output (parsed JSON value) when SUCCEEDED. */
  output?: unknown;
  error?: string;
  cause?: string;
  /** All events of this run (also streamed through onEvent). */
  events: HistoryEvent[];
  /** For FAILED/TIMED_OUT/ABORTED: the checkpoint to pass as `redriveFrom` to re-run the failed state. */
  redrivePoint?: Checkpoint;
  startTime: number;
  stopTime: number;
}

/** Options of executeStateMachine. All names default to stable local values. */
export interface ExecuteOptions {
  invoker?: TaskInvoker;
  executionArn?: string;
  executionName?: string;
  stateMachineArn?: string;
  stateMachineName?: string;
  roleArn?: string;
  /** Epoch ms; defaults to clock.now(). */
  startTime?: number;
  stateMachineType?: 'STANDARD' | 'EXPRESS';
  /** Receives every history event as it is written. */
  onEvent?(event: HistoryEvent): void;
  /** Aborting stops the execution (status ABORTED). `signal.reason` may be `{error, cause}`. */
  signal?: AbortSignal;
  clock?: Clock;
  /** Called after each completed top-level transition. */
  checkpoint?(checkpoint: Checkpoint): void | Promise<void>;
  /** Continue an execution from a persisted checkpoint (no ExecutionStarted event is written). */
  resumeFrom?: Checkpoint;
  /** Re-run from a failed execution's redrivePoint (writes ExecutionRedriven). */
  redriveFrom?: Checkpoint;
  redriveCount?: number;
  /** Creates task tokens for `.waitForTaskToken` tasks. */
  newTaskToken?(): string;
  /** Keep events in ExecutionResult.events (default true). */
  collectEvents?: boolean;
  /** History quota for Standard executions (default 25,000, as AWS); the run fails with States.Runtime past it. */
  maxHistoryEvents?: number;
  /** Told when a distributed Map's run starts and ends (ListMapRuns, DescribeMapRun, UpdateMapRun read it). */
  mapRuns?: MapRunListener;
  /** Partition, region and account used by `$partition`, ARNs and defaults. */
  partition?: string;
  region?: string;
  account?: string;
}

/** A reason a definition is rejected before it runs. */
export interface DefinitionError {
  /** AWS-style code: SCHEMA_VALIDATION_FAILED, MISSING_TRANSITION_TARGET, INVALID_JSON_DESCRIPTION … */
  code: string;
  message: string;
  /** JSON pointer-ish location, e.g. `/States/Foo/Next`. */
  path: string;
}
