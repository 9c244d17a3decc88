// A distributed Map's Map Run: the record DescribeMapRun and ListMapRuns report (its ARN, status,
// dates, settings and item counts), and the settings UpdateMapRun changes while it runs. The Map
// state reads its concurrency and failure tolerance from here before each item it starts, so an
// update takes effect for the items not yet started.
import type { ExecutionResult, HistoryEvent } from './types.js';

/** Map Run statuses as the API reports them. */
export type MapRunStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED';

/** Item (or child execution) counts by status, with every field DescribeMapRun returns. */
export interface MapRunCounts {
  readonly aborted: number;
  readonly failed: number;
  readonly failuresNotRedrivable: number;
  readonly pending: number;
  readonly pendingRedrive: number;
  readonly resultsWritten: number;
  readonly running: number;
  readonly succeeded: number;
  readonly timedOut: number;
  readonly total: number;
}

/** A Map Run as plain data (what a store keeps and DescribeMapRun reads). Dates are epoch milliseconds. */
export interface MapRunRecord {
  readonly mapRunArn: string;
  /** The execution whose Map state started the run. */
  readonly executionArn: string;
  /** `arn:…:stateMachine:<name>/<label>`: the state machine its child workflow executions run. */
  readonly stateMachineArn: string;
  readonly status: MapRunStatus;
  readonly startDate: number;
  readonly stopDate?: number;
  readonly maxConcurrency: number;
  readonly toleratedFailureCount: number;
  readonly toleratedFailurePercentage: number;
  /** Whether the definition or an update set a tolerance (without one, a failed item's own error fails the Map). */
  readonly toleranceSet: boolean;
  readonly itemCounts: MapRunCounts;
}

/** What UpdateMapRun may change. */
export interface MapRunUpdate {
  readonly maxConcurrency?: number;
  readonly toleratedFailureCount?: number;
  readonly toleratedFailurePercentage?: number;
}

/** A child workflow execution a Map Run starts for one item. */
export interface MapRunChild {
  readonly executionArn: string;
  readonly name: string;
  /** The Map Run's state machine (`arn:…:stateMachine:<name>/<label>`). */
  readonly stateMachineArn: string;
  readonly mapRunArn: string;
  /** The ItemProcessor, run as the child's state machine. */
  readonly definition: Readonly<Record<string, unknown>>;
  readonly roleArn: string;
  readonly input: unknown;
  readonly startDate: number;
}

/** Where a child execution's history goes, and what hears how it ended. */
export interface MapRunChildSink {
  onEvent(event: HistoryEvent): void;
  ended(result: ExecutionResult): void;
}

/** Told when a Map Run starts, changes status or counts, and ends (the executions layer keeps its record). */
export interface MapRunListener {
  started(run: MapRun): void;
  ended(run: MapRun): void;
  /** A Standard child execution starts: the sink its history goes to (none: it is not recorded). */
  childStarted?(child: MapRunChild): MapRunChildSink | undefined;
}

/** Raised by `MapRun.update` on a run that is no longer RUNNING. */
export class MapRunNotRunning extends Error {
  override readonly name = 'MapRunNotRunning';
}

/** One Map Run while its Map state runs it. */
export class MapRun {
  readonly mapRunArn: string;
  readonly executionArn: string;
  readonly stateMachineArn: string;
  readonly startDate: number;
  status: MapRunStatus = 'RUNNING';
  stopDate?: number;
  maxConcurrency: number;
  toleratedFailureCount: number;
  toleratedFailurePercentage: number;
  toleranceSet: boolean;
  pending: number;
  running = 0;
  succeeded = 0;
  failed = 0;
  aborted = 0;
  resultsWritten = 0;
  readonly total: number;
  /** Called after an update, so the Map state starts more items or re-checks its tolerance. */
  onUpdate?: () => void;

  constructor(init: {
    /** The parent state machine's ARN (`arn:…:stateMachine:<name>`). */
    stateMachineArn: string;
    executionArn: string;
    /** The Map state's Label, or its name. */
    label: string;
    id: string;
    startDate: number;
    total: number;
    maxConcurrency: number;
    toleratedFailureCount?: number;
    toleratedFailurePercentage?: number;
  }) {
    this.executionArn = init.executionArn;
    this.mapRunArn = `${init.stateMachineArn.replace(':stateMachine:', ':mapRun:')}/${init.label}:${init.id}`;
    this.stateMachineArn = `${init.stateMachineArn}/${init.label}`;
    this.startDate = init.startDate;
    this.total = init.total;
    this.pending = init.total;
    this.maxConcurrency = init.maxConcurrency;
    this.toleranceSet = init.toleratedFailureCount !== undefined || init.toleratedFailurePercentage !== undefined;
    this.toleratedFailureCount = init.toleratedFailureCount ?? 0;
    this.toleratedFailurePercentage = init.toleratedFailurePercentage ?? 0;
  }

  /** True while `failures` failed items are within the run's tolerance (none is tolerated unless one is set). */
  tolerates(failures: number): boolean {
    if (failures === 0) return true;
    if (!this.toleranceSet) return false;
    if (failures <= this.toleratedFailureCount) return true;
    return this.total > 0 && (failures / this.total) * 100 <= this.toleratedFailurePercentage;
  }

  /** How many items may run at once now (MaxConcurrency 0: no limit). */
  get limit(): number {
    return this.maxConcurrency === 0 ? Number.POSITIVE_INFINITY : this.maxConcurrency;
  }

  /** UpdateMapRun: new settings for the items not yet started. */
  update(u: MapRunUpdate): void {
    if (this.status !== 'RUNNING') throw new MapRunNotRunning(`Map Run is ${this.status}: only a RUNNING Map Run can be updated`);
    if (u.maxConcurrency !== undefined) this.maxConcurrency = u.maxConcurrency;
    if (u.toleratedFailureCount !== undefined) this.toleratedFailureCount = u.toleratedFailureCount;
    if (u.toleratedFailurePercentage !== undefined) this.toleratedFailurePercentage = u.toleratedFailurePercentage;
    if (u.toleratedFailureCount !== undefined || u.toleratedFailurePercentage !== undefined) this.toleranceSet = true;
    this.onUpdate?.();
  }

  itemStarted(): void {
    this.pending--;
    this.running++;
  }

  itemEnded(outcome: 'succeeded' | 'failed' | 'aborted'): void {
    this.running--;
    this[outcome]++;
  }

  /** Ends the run; a SUCCEEDED run has written every item's result to the Map state's output. */
  end(status: Exclude<MapRunStatus, 'RUNNING'>, at: number): void {
    this.status = status;
    this.stopDate = at;
    if (status === 'SUCCEEDED') this.resultsWritten = this.total;
    this.onUpdate = undefined;
  }

  /** The run as plain data, as of now. */
  snapshot(): MapRunRecord {
    const itemCounts: MapRunCounts = {
      aborted: this.aborted,
      failed: this.failed,
      failuresNotRedrivable: 0,
      pending: this.pending,
      pendingRedrive: 0,
      resultsWritten: this.resultsWritten,
      running: this.running,
      succeeded: this.succeeded,
      timedOut: 0,
      total: this.total,
    };
    return {
      mapRunArn: this.mapRunArn,
      executionArn: this.executionArn,
      stateMachineArn: this.stateMachineArn,
      status: this.status,
      startDate: this.startDate,
      ...(this.stopDate !== undefined ? { stopDate: this.stopDate } : {}),
      maxConcurrency: this.maxConcurrency,
      toleratedFailureCount: this.toleratedFailureCount,
      toleratedFailurePercentage: this.toleratedFailurePercentage,
      toleranceSet: this.toleranceSet,
      itemCounts,
    };
  }
}
