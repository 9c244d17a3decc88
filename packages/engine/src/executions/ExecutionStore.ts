import type { MapRunRecord } from '../interpreter/MapRun.js';
import type { Checkpoint, HistoryEvent } from '../interpreter/types.js';

/** A state machine as the API describes it. Dates are epoch milliseconds. */
export interface StateMachineRecord {
  readonly stateMachineArn: string;
  readonly name: string;
  readonly type: 'STANDARD' | 'EXPRESS';
  /** The definition text exactly as created/updated. */
  readonly definition: string;
  readonly roleArn: string;
  readonly creationDate: number;
  readonly updateDate?: number;
  readonly revisionId: string;
  readonly description?: string;
  readonly loggingConfiguration?: unknown;
  readonly tracingConfiguration?: unknown;
  /** Published versions, oldest first (PublishStateMachineVersion, `publish: true`). */
  readonly versions?: readonly StateMachineVersion[];
  /** The highest version number ever published: numbers are not reused after a delete. */
  readonly lastVersion?: number;
  readonly aliases?: readonly StateMachineAlias[];
  /** Tags, in the order they were first set. */
  readonly tags?: readonly ResourceTag[];
}

/** A published version: a read-only snapshot of one revision of a state machine. */
export interface StateMachineVersion {
  readonly version: number;
  /** The revision it snapshots. */
  readonly revisionId: string;
  readonly definition: string;
  readonly roleArn: string;
  readonly creationDate: number;
  readonly description?: string;
  readonly loggingConfiguration?: unknown;
  readonly tracingConfiguration?: unknown;
}

/** One version an alias routes to, and the share of executions it gets (percent). */
export interface AliasRoute {
  readonly stateMachineVersionArn: string;
  readonly weight: number;
}

/** An alias: a name that routes StartExecution to one version, or splits it between two. */
export interface StateMachineAlias {
  readonly name: string;
  readonly routingConfiguration: readonly AliasRoute[];
  readonly creationDate: number;
  readonly updateDate?: number;
  readonly description?: string;
}

/** A tag as the API carries it. */
export interface ResourceTag {
  readonly key: string;
  readonly value: string;
}

/** Execution statuses as the API reports them (PENDING_REDRIVE while a redrive starts). */
export type ExecutionRecordStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED' | 'PENDING_REDRIVE';

/** One execution. Dates are epoch milliseconds; input/output are JSON text. */
export interface ExecutionRecord {
  readonly executionArn: string;
  readonly stateMachineArn: string;
  readonly stateMachineName: string;
  readonly name: string;
  readonly type: 'STANDARD' | 'EXPRESS';
  /** The definition this execution runs (a later UpdateStateMachine does not change it). */
  readonly definition: string;
  readonly roleArn: string;
  readonly status: ExecutionRecordStatus;
  readonly input: string;
  readonly output?: string;
  readonly error?: string;
  readonly cause?: string;
  readonly startDate: number;
  readonly stopDate?: number;
  readonly redriveCount: number;
  readonly redriveDate?: number;
  /** Where a redrive resumes (the failed state), from the interpreter's ExecutionResult. */
  readonly redrivePoint?: Checkpoint;
  /** The execution that started this one through states:startExecution, if any. */
  readonly parentExecutionArn?: string;
  /** The version it runs, when started through a version or an alias ARN. */
  readonly stateMachineVersionArn?: string;
  /** The alias it was started through, if any. */
  readonly stateMachineAliasArn?: string;
  /** For a child workflow execution of a distributed Map: the Map Run that started it. */
  readonly mapRunArn?: string;
  /** The Map Runs its distributed Map states started, oldest first (as of their last change). */
  readonly mapRuns?: readonly MapRunRecord[];
}

/** Everything a store holds, as loaded at start-up. */
export interface StoreSnapshot {
  readonly stateMachines: StateMachineRecord[];
  readonly executions: ExecutionRecord[];
}

/**
 * Persistence of state machines, executions, their histories and checkpoints. The manager calls it
 * synchronously so that, when a call returns, the change is durable (for the directory store).
 * Events are appended in batches, always before the checkpoint they lead up to.
 */
export interface ExecutionStore {
  /** True when the store survives a restart (the manager then checkpoints every transition). */
  readonly durable: boolean;
  load(): StoreSnapshot;
  putStateMachine(r: StateMachineRecord): void;
  deleteStateMachine(stateMachineArn: string): void;
  putExecution(r: ExecutionRecord): void;
  appendEvents(executionArn: string, events: readonly HistoryEvent[]): void;
  readEvents(executionArn: string): HistoryEvent[];
  /** Drops events after `lastEventId` (work after the last checkpoint is redone on resume). */
  truncateEvents(executionArn: string, lastEventId: number): void;
  /** Records where to resume; `undefined`: the execution has ended (no checkpoint counts until the next). */
  putCheckpoint(executionArn: string, cp: Checkpoint | undefined): void;
  /**
   * Appends the events that lead up to a checkpoint, then the checkpoint (what a completed top-level
   * transition writes): as appendEvents then putCheckpoint, in one write for the directory store.
   */
  appendCheckpoint(executionArn: string, events: readonly HistoryEvent[], cp: Checkpoint): void;
  readCheckpoint(executionArn: string): Checkpoint | undefined;
  /** Lets go of what the store holds open (the manager closing); a later call opens it again. */
  close?(): void | Promise<void>;
}
