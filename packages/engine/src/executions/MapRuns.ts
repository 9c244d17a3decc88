// The Map Runs of every execution: the live ones (their Map state is running them, UpdateMapRun
// reaches them) and the records kept in their execution's record (ListMapRuns, DescribeMapRun).
import type { MapRun, MapRunListener, MapRunRecord } from '../interpreter/MapRun.js';
import { checkMapRunArn } from './arns.js';
import type { ExecutionRecord } from './ExecutionStore.js';
import { SfnApiError } from './SfnApiError.js';

type Json = Record<string, unknown>;

/** What the Map Runs need from the executions manager: an execution's record, and a way to store a changed one. */
export interface MapRunHost {
  record(executionArn: string): ExecutionRecord | undefined;
  /** Keeps the changed record; `persist` when the execution's records are stored (Standard). */
  save(record: ExecutionRecord, persist: boolean): void;
}

/** Index of Map Runs by ARN, and the three Map Run actions of the API. */
export class MapRuns {
  private readonly index = new Map<string, { executionArn: string; live?: MapRun }>();

  constructor(private readonly host: MapRunHost) {}

  /** Indexes the Map Runs of a loaded (or changed) execution record. */
  load(e: ExecutionRecord): void {
    for (const r of e.mapRuns ?? []) if (!this.index.has(r.mapRunArn)) this.index.set(r.mapRunArn, { executionArn: e.executionArn });
  }

  /** The listener an execution's run reports its Map Runs to. */
  listener(executionArn: string, persist: boolean): MapRunListener {
    return {
      started: (run) => {
        this.index.set(run.mapRunArn, { executionArn, live: run });
        this.keep(executionArn, run.snapshot(), persist);
      },
      ended: (run) => {
        this.index.set(run.mapRunArn, { executionArn });
        this.keep(executionArn, run.snapshot(), persist);
      },
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
          : {
              ...r,
              status: 'ABORTED' as const,
              stopDate: at,
              itemCounts: { ...r.itemCounts, running: 0, aborted: r.itemCounts.aborted + r.itemCounts.running },
            },
      ),
    };
  }

  /** An execution's Map Runs, oldest first, the live ones as of now. */
  of(e: ExecutionRecord): MapRunRecord[] {
    return (e.mapRuns ?? []).map((r) => this.index.get(r.mapRunArn)?.live?.snapshot() ?? r);
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
    if (run.status === 'RUNNING') this.keep(entry.executionArn, run.snapshot(), this.host.record(entry.executionArn)?.type === 'STANDARD');
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
    return r;
  }

  /** Writes a Map Run's snapshot into its execution's record. */
  private keep(executionArn: string, snap: MapRunRecord, persist: boolean): void {
    const e = this.host.record(executionArn);
    if (!e) return;
    const runs = [...(e.mapRuns ?? [])];
    const i = runs.findIndex((r) => r.mapRunArn === snap.mapRunArn);
    if (i >= 0) runs[i] = snap;
    else runs.push(snap);
    this.host.save({ ...e, mapRuns: runs }, persist);
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
