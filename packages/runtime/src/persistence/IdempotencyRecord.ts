/** The three idempotency statuses of the Powertools model. EXPIRED is derived: a record past its expiry. */
export type IdempotencyStatus = 'INPROGRESS' | 'COMPLETED' | 'EXPIRED';

/** One step's idempotency record. */
export interface IdempotencyRecord {
  readonly key: string;
  readonly status: IdempotencyStatus;
  /** Epoch seconds after which the record no longer counts (and DynamoDB TTL may drop it). */
  readonly expiresAt: number;
  /** Epoch ms until which the INPROGRESS holder owns the step. */
  readonly leaseExpiresAt: number;
  /** Identifies the attempt holding the lease; updates are conditional on it. */
  readonly leaseId: string;
  /**
   * Embedded stack only: the generation of the process that holds the lease (see
   * RuntimeConfig.leaseEpoch). A later generation knows the holder has ended.
   */
  readonly leaseEpoch?: number;
  /** Set just before a side-effecting call leaves the process: epoch ms. */
  readonly dispatchedAt?: number;
  /** What was about to be called (tool/connector and target), for the StepOutcomeUnknown message. */
  readonly dispatchTarget?: string;
  /** The call declared itself idempotent (e.g. it sends an idempotency key), so repeating it is safe. */
  readonly idempotent?: boolean;
  readonly output?: unknown;
  readonly runId?: string;
  readonly stepId?: string;
}

/** Raised by `saveInProgress` when another record holds the key; carries that record. */
export class IdempotencyItemAlreadyExistsError extends Error {
  override readonly name = 'IdempotencyItemAlreadyExistsError';
  constructor(readonly existingRecord: IdempotencyRecord) {
    super(`idempotency record ${existingRecord.key} already exists (${existingRecord.status})`);
  }
}

/** Raised when a lease-conditional update finds the lease held by someone else. */
export class IdempotencyLeaseLostError extends Error {
  override readonly name = 'IdempotencyLeaseLostError';
  constructor(key: string) {
    super(`idempotency lease on ${key} was taken over by another attempt`);
  }
}

/** The step record's end, which a layer that keeps step records writes with the commit. */
export interface CommittedStep {
  readonly output: unknown;
  readonly outputRef?: string;
  readonly usage?: unknown;
}

/** What saveUnclaimedSuccess records: the commit, and what the claim would have recorded. */
export interface UnclaimedSuccess {
  readonly leaseId: string;
  readonly output: unknown;
  /** When the attempt began (epoch ms): the step record's start. */
  readonly startedAtMs: number;
  readonly nowMs: number;
  readonly ttlSeconds: number;
  readonly idempotent: boolean;
  readonly runId?: string;
  readonly stepId?: string;
  readonly leaseEpoch?: number;
  readonly step?: CommittedStep;
}

/** The "about to call outside" marker (see markDispatched), when a claim records it in the same write. */
export interface DispatchMarker {
  /** What is about to be called, for the StepOutcomeUnknown message. */
  readonly target: string;
  /** Epoch ms. */
  readonly atMs: number;
  /** The call declared itself idempotent (recorded on the marker, as markDispatched records it). */
  readonly idempotent: boolean;
}

/** What a claim (saveInProgress) records. */
export interface ClaimParams {
  readonly leaseId: string;
  readonly nowMs: number;
  readonly leaseSeconds: number;
  readonly ttlSeconds: number;
  /** Decides whether a lapsed lease that had dispatched may be taken over (see saveInProgress). */
  readonly idempotent: boolean;
  readonly runId?: string;
  readonly stepId?: string;
  readonly leaseEpoch?: number;
  /**
   * The dispatch marker, written with the claim: one conditional write where a claim and then
   * markDispatched took two, for an attempt whose first act under its claim is the outside call.
   */
  readonly dispatch?: DispatchMarker;
}

/**
 * The abstract persistence layer (Powertools idempotency model): providers implement these
 * operations with ONE conditional write each — never read-then-write.
 */
export abstract class BasePersistenceLayer {
  /**
   * True when the claim also marks the step record RUNNING (counting the attempt) and a commit
   * with `step` also records its end, so the caller writes the step record only on other paths.
   */
  readonly keepsStepRecords: boolean = false;
  /**
   * Claims `key` for this attempt. Succeeds when there is no record, the record has expired, or
   * an earlier attempt's lease has run out without reaching outside (or with `idempotent`).
   * Otherwise throws IdempotencyItemAlreadyExistsError carrying the existing record. With
   * `dispatch`, the record it writes carries the dispatch marker too.
   */
  abstract saveInProgress(key: string, params: ClaimParams): Promise<void>;
  /** Records that the holder is about to call `target` outside the process. */
  abstract markDispatched(key: string, params: { leaseId: string; nowMs: number; target: string; idempotent: boolean }): Promise<void>;
  /**
   * Commits the output of an attempt that made no claim (see runIdempotent's `claimAfterMs`), in
   * one conditional write that succeeds only where the key has no record at all: false when one
   * exists, and the attempt claims after all. The record written is the one a claim and its commit
   * would have left (`startedAtMs` when the attempt began, the attempt counted once). A layer that
   * cannot do it in one write answers false: the attempt claims and commits as usual.
   */
  saveUnclaimedSuccess(_key: string, _params: UnclaimedSuccess): Promise<boolean> {
    return Promise.resolve(false);
  }
  /** Commits the output: status COMPLETED. */
  abstract saveSuccess(
    key: string,
    params: { leaseId: string; output: unknown; nowMs: number; ttlSeconds: number; step?: CommittedStep },
  ): Promise<void>;
  /** Ends the lease early but keeps the dispatch marker (the outcome of the outside call is unknown). */
  abstract releaseLease(key: string, params: { leaseId: string }): Promise<void>;
  /** Removes the holder's record after a definite failure, so a retry starts clean. */
  abstract deleteRecord(key: string, params: { leaseId?: string }): Promise<void>;
  abstract getRecord(key: string): Promise<IdempotencyRecord | undefined>;
}

/** The record's effective status at `nowMs` (COMPLETED/INPROGRESS past expiry read as EXPIRED). */
export function effectiveStatus(r: IdempotencyRecord, nowMs: number): IdempotencyStatus {
  return r.expiresAt * 1000 < nowMs ? 'EXPIRED' : r.status;
}

/** An idempotency record from its stored attributes (an IDEM# item, or a step record's `idem`). */
export function idempotencyRecordOf(item: Record<string, unknown>): IdempotencyRecord {
  return {
    key: String(item.key),
    status: item.status as IdempotencyRecord['status'],
    expiresAt: Number(item.expiresAt),
    leaseExpiresAt: Number(item.leaseExpiresAt),
    leaseId: String(item.leaseId),
    ...(item.leaseEpoch !== undefined ? { leaseEpoch: Number(item.leaseEpoch) } : {}),
    ...(item.dispatchedAt !== undefined ? { dispatchedAt: Number(item.dispatchedAt) } : {}),
    ...(item.dispatchTarget !== undefined ? { dispatchTarget: String(item.dispatchTarget) } : {}),
    ...(item.idempotent !== undefined ? { idempotent: Boolean(item.idempotent) } : {}),
    ...('output' in item ? { output: item.output } : {}),
    ...(item.runId !== undefined ? { runId: String(item.runId) } : {}),
    ...(item.stepId !== undefined ? { stepId: String(item.stepId) } : {}),
  };
}
