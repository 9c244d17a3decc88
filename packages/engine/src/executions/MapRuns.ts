// The Map Runs of every execution: the live ones (their Map state is running them, UpdateMapRun
// reaches them) and the records kept in their execution's record (ListMapRuns, DescribeMapRun).
import type { MapRun, MapRunChild, MapRunChildSink, MapRunCounts, MapRunListener, MapRunRecord } from '../interpreter/MapRun.js';
import { checkMapRunArn } from './arns.js';
import type { ExecutionRecord } from './ExecutionStore.js';
import { SfnApiError } from './SfnApiError.js';

type Json = Record<string, unknown>;

/** What the Map Runs need from the executions manager: an execution's record, and a way to store a changed one. */
export interface MapRunHost {
  record(executionArn: string): ExecutionRecord | undefined;
  /** Keeps the changed record; `persist` when the execution's records are stored (Standard). */
  save(record: ExecutionRecord, persist: boolean): void;
  /** The recorded child executions of a Map Run. */
  children(mapRunArn: string): ExecutionRecord[];
  /** A child workflow execution starts: its record is kept, and its history goes to the sink. */
  childStarted(child: MapRunChild): MapRunChildSink | undefined;
}

/** Index of Map Runs by ARN, and the three Map Run actions of the API. */
export class MapRuns {
  private readonly index = new Map<string, { executionArn: string; live?: MapRun }>();

  constructor(private readonly host: MapRunHost) {}

  /** Indexes the Map Runs of a loaded (or changed) execution record. */
  load(e: ExecutionRecord): void {
    for (const r of e.mapRuns ?? []) if (!this.index.has(r.mapRunArn)) this.index.set(r.mapRunArn, { executionArn: e.executionArn });
  }

  /**
   * The listener an execution's run reports its Map Runs to (and those of its child executions,
   * whose own distributed Maps start Map Runs of theirs). `persist` for a Standard execution.
   */
  listener(persist: boolean): MapRunListener {
    return {
      started: (run) => {
        this.index.set(run.mapRunArn, { executionArn: run.executionArn, live: run });
        this.keep(run.executionArn, run.snapshot());
      },
      ended: (run) => {
        this.index.set(run.mapRunArn, { executionArn: run.executionArn });
        this.keep(run.executionArn, run.snapshot());
      },
      // Children of a Standard execution are recorded (Express ones are not, as on AWS).
      ...(persist ? { childStarted: (child: MapRunChild) => this.host.childStarted(child) } : {}),
    };
  }

  /**
   * An execution's record with its RUNNING Map Runs marked ABORTED: their Map state ended with the
   * process that ran it (a resumed execution runs its Map state again, as a new Map Run).
   */
  withStaleRunsAborted(e: ExecutionRecord, at: number): ExecutionRecord {
    if (!e.mapRuns?.some((r) => r.status === 'RUNNING' && !this.index.get(r.mapRunArn)?.live)) return e;
    return {
      ...e,
      mapRuns: e.mapRuns.map((r) =>
        r.status !== 'RUNNING' || this.index.get(r.mapRunArn)?.live
          ? r
          : { ...r, status: 'ABORTED' as const, stopDate: at, itemCounts: this.countsFromChildren(r, true) },
      ),
    };
  }

  /** An execution's Map Runs, oldest first, the live ones as of now. */
  of(e: ExecutionRecord): MapRunRecord[] {
    return (e.mapRuns ?? []).map((r) => this.current(r));
  }

  /**
   * A Map Run as of now: a live one's own counts; one RUNNING in another process (a reader of the
   * same store), counted from its child executions' records, which are stored as each starts and ends.
   */
  private current(r: MapRunRecord): MapRunRecord {
    const live = this.index.get(r.mapRunArn)?.live;
    if (live) return live.snapshot();
    return r.status === 'RUNNING' ? { ...r, itemCounts: this.countsFromChildren(r, false) } : r;
  }

  /** Item counts from a Map Run's recorded children (`aborting`: the running ones count as aborted). */
  private countsFromChildren(r: MapRunRecord, aborting: boolean): MapRunCounts {
    const children = this.host.children(r.mapRunArn);
    if (children.length === 0)
      return aborting ? { ...r.itemCounts, running: 0, aborted: r.itemCounts.aborted + r.itemCounts.running } : r.itemCounts;
    const n = (status: string) => children.filter((c) => c.status === status).length;
    return {
      ...r.itemCounts,
      succeeded: n('SUCCEEDED'),
      failed: n('FAILED') + n('TIMED_OUT'),
      aborted: n('ABORTED') + (aborting ? n('RUNNING') : 0),
      running: aborting ? 0 : n('RUNNING'),
      pending: r.itemCounts.total - children.length,
    };
  }

  /** Throws ResourceNotFound (or InvalidArn) unless the Map Run exists. */
  require(mapRunArn: unknown): string {
    return this.find(mapRunArn).mapRunArn;
  }

  /** DescribeMapRun. */
  describe(req: Json): Json {
    const r = this.find(req.mapRunArn);
    return {
      mapRunArn: r.mapRunArn,
      executionArn: r.executionArn,
      status: r.status,
      startDate: r.startDate,
      ...(r.stopDate !== undefined ? { stopDate: r.stopDate } : {}),
      maxConcurrency: r.maxConcurrency,
      toleratedFailurePercentage: r.toleratedFailurePercentage,
      toleratedFailureCount: r.toleratedFailureCount,
      itemCounts: r.itemCounts,
      // Each item runs as one child workflow execution (no ItemBatcher), so the two counts agree.
      executionCounts: r.itemCounts,
      redriveCount: 0,
    };
  }

  /** UpdateMapRun: new concurrency and tolerance for the items a RUNNING Map Run has not started yet. */
  update(req: Json): Json {
    const arn = checkMapRunArn(req.mapRunArn);
    const maxConcurrency = checkWhole(req.maxConcurrency, 'maxConcurrency');
    const toleratedFailureCount = checkWhole(req.toleratedFailureCount, 'toleratedFailureCount');
    const toleratedFailurePercentage = checkPercentage(req.toleratedFailurePercentage);
    if (maxConcurrency === undefined && toleratedFailureCount === undefined && toleratedFailurePercentage === undefined) {
      throw new SfnApiError(
        'ValidationException',
        'UpdateMapRun changes nothing: give at least one of maxConcurrency, toleratedFailureCount or toleratedFailurePercentage',
      );
    }
    const entry = this.index.get(arn);
    const run = entry?.live;
    if (!run) {
      const r = this.find(arn);
      throw new SfnApiError(
        'ValidationException',
        `Map Run '${arn}' is ${r.status}: only a RUNNING Map Run can be updated (its settings apply to the items it has not started yet)`,
      );
    }
    run.update({
      ...(maxConcurrency !== undefined ? { maxConcurrency } : {}),
      ...(toleratedFailureCount !== undefined ? { toleratedFailureCount } : {}),
      ...(toleratedFailurePercentage !== undefined ? { toleratedFailurePercentage } : {}),
    });
    // Another process reading the store (a `runs` command) sees the new settings too.
    if (run.status === 'RUNNING') this.keep(entry.executionArn, run.snapshot());
    return {};
  }

  /** A Map Run's record as of now (ResourceNotFound when no execution started it). */
  private find(mapRunArn: unknown): MapRunRecord {
    const arn = checkMapRunArn(mapRunArn);
    const entry = this.index.get(arn);
    const live = entry?.live?.snapshot();
    if (live) return live;
    const r = entry ? this.host.record(entry.executionArn)?.mapRuns?.find((x) => x.mapRunArn === arn) : undefined;
    if (!r) throw new SfnApiError('ResourceNotFound', `Resource not found: '${arn}' (ListMapRuns lists the Map Runs of an execution)`);
    return this.current(r);
  }

  /** Writes a Map Run's snapshot into its execution's record. */
  private keep(executionArn: string, snap: MapRunRecord): void {
    const e = this.host.record(executionArn);
    if (!e) return;
    const runs = [...(e.mapRuns ?? [])];
    const i = runs.findIndex((r) => r.mapRunArn === snap.mapRunArn);
    if (i >= 0) runs[i] = snap;
    else runs.push(snap);
    this.host.save({ ...e, mapRuns: runs }, e.type === 'STANDARD');
  }
}

function checkWhole(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    throw new SfnApiError(
      'ValidationException',
      `1 validation error detected: Value '${String(v)}' at '${field}' failed to satisfy constraint: Member must have value greater than or equal to 0`,
    );
  }
  return v;
}

function checkPercentage(v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 100) {
    throw new SfnApiError(
      'ValidationException',
      `1 validation error detected: Value '${String(v)}' at 'toleratedFailurePercentage' failed to satisfy constraint: Member must have value between 0 and 100`,
    );
  }
  return v;
}
