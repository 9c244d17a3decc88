import { randomUUID } from 'node:crypto';
import { RuntimeError } from '../errors/RuntimeError.js';
import {
  BasePersistenceLayer,
  IdempotencyItemAlreadyExistsError,
  effectiveStatus,
  type CommittedStep,
  type DispatchMarker,
  type IdempotencyRecord,
} from '../persistence/IdempotencyRecord.js';

/** Handed to the guarded function: call `dispatch` right before reaching outside the process. */
export interface DispatchGuard {
  /**
   * Records "about to call `target`" (one conditional update) before a side effect. After this,
   * a crash leaves a marker that stops a re-run from repeating the call unless `idempotent`.
   */
  dispatch(target: string, options?: { idempotent?: boolean }): Promise<void>;
  /**
   * Makes sure this attempt holds the claim before it goes on (a late claim is written now), for
   * a write that another attempt's must not interleave with (an agent turn's conversation).
   */
  hold(): Promise<void>;
  readonly leaseId: string;
}

/** Options of one guarded step execution. */
export interface RunIdempotentOptions {
  readonly layer: BasePersistenceLayer;
  readonly key: string;
  readonly clock: () => number;
  readonly leaseSeconds: number;
  readonly ttlSeconds: number;
  /** The call is safe to repeat (e.g. it carries an idempotency key): a crashed attempt may be redone. */
  readonly idempotent?: boolean;
  readonly runId?: string;
  readonly stepId?: string;
  /** Embedded stack only: this process's generation (RuntimeConfig.leaseEpoch), recorded on the lease. */
  readonly leaseEpoch?: number;
}

/** Options of runIdempotent: the guarded call, plus how to record the step's end with the commit. */
export interface RunIdempotentStepOptions<T> extends RunIdempotentOptions {
  /** The step record's end for a value, handed to a layer that keeps step records with the commit. */
  readonly committedStep?: (value: T) => CommittedStep;
  /**
   * Claim late (see runIdempotent): `fn` starts at once, and the claim is written only when `fn`
   * reaches outside (`dispatch`) or is still running after this many ms, meanwhile; an `fn` that
   * ends sooner commits in one conditional write. Undefined or 0: claim before `fn` starts. Only
   * for an `fn` that is harmless to repeat, and an attempt unlikely to find a finished one ahead
   * of it (a fork's carried-over results, a retried state's commit, would be recomputed first).
   */
  readonly claimAfterMs?: number;
  /**
   * Claim at the first `dispatch` (or `hold`), with the dispatch marker in the same conditional
   * write, instead of before `fn` starts. Only for an `fn` that reaches outside through `dispatch`
   * alone, so that what it does before is local and harmless to repeat (a tool or connector call
   * checking and preparing its request); an `fn` that never dispatches commits as an unclaimed one
   * does. The same proviso as `claimAfterMs`: a repeat finds a commit ahead of it only once it
   * dispatches or ends.
   */
  readonly claimAtDispatch?: boolean;
  /** Called once this attempt has counted itself on the record: its claim, or its unclaimed commit. */
  readonly onClaim?: () => void;
}

/** Thrown out of `dispatch` when the late claim found the step committed: `fn` stops, the commit is returned. */
class CommittedAhead extends Error {
  override readonly name = 'CommittedAhead';
  constructor(readonly record: IdempotencyRecord) {
    super(`step ${record.stepId ?? record.key} was committed by another attempt`);
  }
}

/** Marks an error as "the outside call may or may not have happened" (timeouts, dropped connections). */
export function markOutcomeUnknown<E extends Error>(e: E): E {
  (e as E & { outcomeUnknown?: boolean }).outcomeUnknown = true;
  return e;
}

function isOutcomeUnknown(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { outcomeUnknown?: unknown }).outcomeUnknown === true;
}

/**
 * Runs `fn` at most once per key (Powertools idempotency model): claim with an INPROGRESS lease,
 * mark dispatch before any outside call, commit COMPLETED with the output. A committed output is
 * returned instead of recomputing; a crashed attempt that had reached outside fails with
 * `StepOutcomeUnknown` rather than repeating the call.
 *
 * With `claimAfterMs`, the claim comes late: `fn` runs first, and a quick one that never reaches
 * outside (a model turn on the offline provider, a read-only tool) commits in ONE conditional
 * write, made only where no record exists; any record there (another attempt's lease, a commit,
 * an earlier failure) sends it through the claim after all, whose rules decide as they always
 * do. A slow `fn` is claimed once it has run `claimAfterMs`, in the background, so a long model
 * call still shows RUNNING and holds its lease; `dispatch` and `hold` claim before they go on.
 * What this gives up: an attempt that is a repeat computes before it finds the commit ahead of it
 * (and returns that commit, not its own value), so the caller asks for it only where a repeat is
 * rare: a state's first try, in a run that is not a fork (executeStep).
 */
export async function runIdempotent<T>(
  opts: RunIdempotentStepOptions<T>,
  fn: (guard: DispatchGuard) => Promise<T>,
): Promise<{ value: T; reused: boolean }> {
  const leaseId = randomUUID();
  const idempotent = opts.idempotent ?? false;
  // The claim, once made: the committed record it found instead, or undefined when this attempt
  // holds the lease. Rejected with StepInProgress / StepOutcomeUnknown as the claim decides.
  let claim: Promise<IdempotencyRecord | undefined> | undefined;
  const claimNow = (marker?: DispatchMarker) =>
    (claim ??= acquireLease(opts, leaseId, idempotent, marker).then((committed) => {
      if (committed === undefined) opts.onClaim?.();
      return committed;
    }));
  const late = (opts.claimAfterMs !== undefined && opts.claimAfterMs > 0) || opts.claimAtDispatch === true;
  if (!late) {
    const committed = await claimNow();
    if (committed) return { value: committed.output as T, reused: true };
  }
  const startedAtMs = opts.clock();
  // The background claim's own failure surfaces where the claim is awaited (dispatch, the end).
  const timer =
    late && opts.claimAfterMs !== undefined && opts.claimAfterMs > 0
      ? setTimeout(() => void claimNow().catch(() => undefined), opts.claimAfterMs)
      : undefined;
  timer?.unref?.();

  let dispatched: { target: string; at: number } | undefined;
  const guard: DispatchGuard = {
    leaseId,
    async hold() {
      const committed = await claimNow();
      if (committed) throw new CommittedAhead(committed);
    },
    async dispatch(target, o = {}) {
      const at = opts.clock();
      const marker: DispatchMarker = { target, atMs: at, idempotent: o.idempotent ?? idempotent };
      if (claim === undefined) {
        // Not claimed yet (a late claim): the claim carries the marker, one write instead of two.
        const committed = await claimNow(marker);
        if (committed) throw new CommittedAhead(committed);
      } else {
        await guard.hold();
        await opts.layer.markDispatched(opts.key, { leaseId, nowMs: at, target, idempotent: marker.idempotent });
      }
      dispatched = { target, at };
    },
  };
  let value: T;
  try {
    value = await fn(guard);
  } catch (e) {
    clearTimeout(timer);
    if (e instanceof CommittedAhead) return { value: e.record.output as T, reused: true };
    // Nothing of this attempt's is stored unless it holds the lease.
    if (claim === undefined || (await claim.catch(() => null)) !== undefined) throw e;
    if (dispatched && isOutcomeUnknown(e)) {
      // We asked, and never heard back: keep the marker so nobody repeats the call blindly.
      await opts.layer.releaseLease(opts.key, { leaseId }).catch(() => undefined);
      if (idempotent) throw e;
      throw outcomeUnknownError(opts, dispatched.target, dispatched.at, e);
    }
    // A definite failure: nothing committed, so a retry may run the step again.
    await opts.layer.deleteRecord(opts.key, { leaseId }).catch(() => undefined);
    throw e;
  }
  clearTimeout(timer);
  const step = opts.committedStep?.(value);
  const output = value ?? null;
  if (claim === undefined) {
    const committed = await opts.layer.saveUnclaimedSuccess(opts.key, {
      leaseId,
      output,
      startedAtMs,
      nowMs: opts.clock(),
      ttlSeconds: opts.ttlSeconds,
      idempotent,
      runId: opts.runId,
      stepId: opts.stepId,
      ...(opts.leaseEpoch !== undefined ? { leaseEpoch: opts.leaseEpoch } : {}),
      ...(step ? { step } : {}),
    });
    if (committed) {
      opts.onClaim?.();
      return { value, reused: false };
    }
  }
  const ahead = await claimNow();
  if (ahead) return { value: ahead.output as T, reused: true };
  await opts.layer.saveSuccess(opts.key, { leaseId, output, nowMs: opts.clock(), ttlSeconds: opts.ttlSeconds, ...(step ? { step } : {}) });
  return { value, reused: false };
}

/**
 * Claims the key for this attempt: undefined when it holds the lease now, the committed record
 * when the step is done already; StepInProgress while another attempt holds it, StepOutcomeUnknown
 * when a crashed attempt had reached outside.
 */
async function acquireLease(
  opts: RunIdempotentOptions,
  leaseId: string,
  idempotent: boolean,
  marker?: DispatchMarker,
): Promise<IdempotencyRecord | undefined> {
  const claim = () =>
    opts.layer.saveInProgress(opts.key, {
      leaseId,
      nowMs: opts.clock(),
      leaseSeconds: opts.leaseSeconds,
      ttlSeconds: opts.ttlSeconds,
      idempotent,
      runId: opts.runId,
      stepId: opts.stepId,
      ...(opts.leaseEpoch !== undefined ? { leaseEpoch: opts.leaseEpoch } : {}),
      ...(marker ? { dispatch: marker } : {}),
    });
  try {
    try {
      await claim();
    } catch (e) {
      const held = (e as Partial<IdempotencyItemAlreadyExistsError>).existingRecord;
      if ((e as Error).name !== 'IdempotencyItemAlreadyExistsError' || !held || !heldByEndedProcess(held, opts, opts.clock())) throw e;
      // The lease belongs to a process that held the embedded stack before this one, so it has
      // ended: its lease ends with it (one write, conditional on that lease), and the claim is
      // tried again under the usual rule. If that process had dispatched a call that is not
      // idempotent, the claim fails again and the outcome is unknown, below.
      await opts.layer.releaseLease(opts.key, { leaseId: held.leaseId }).catch((err: unknown) => {
        if ((err as Error).name !== 'IdempotencyLeaseLostError') throw err;
      });
      await claim();
    }
    return undefined;
  } catch (e) {
    if (!(e instanceof Error) || e.name !== 'IdempotencyItemAlreadyExistsError') throw e;
    const existing = (e as IdempotencyItemAlreadyExistsError).existingRecord;
    const now = opts.clock();
    const status = effectiveStatus(existing, now);
    if (status === 'COMPLETED') return existing;
    if (existing.dispatchedAt !== undefined && (existing.leaseExpiresAt < now || heldByEndedProcess(existing, opts, now))) {
      throw outcomeUnknownError(opts, existing.dispatchTarget ?? 'an external service', existing.dispatchedAt);
    }
    throw new RuntimeError(
      'StepInProgress',
      `step ${opts.stepId ?? opts.key} is already running in another attempt (lease until ${new Date(existing.leaseExpiresAt).toISOString()})`,
      {
        retryable: true,
        details: { key: opts.key, leaseExpiresAt: existing.leaseExpiresAt },
      },
    );
  }
}

/** An INPROGRESS lease still running that an earlier generation of the embedded stack holds. */
function heldByEndedProcess(r: IdempotencyRecord, opts: RunIdempotentOptions, nowMs: number): boolean {
  return (
    r.status === 'INPROGRESS' &&
    r.leaseExpiresAt >= nowMs &&
    opts.leaseEpoch !== undefined &&
    r.leaseEpoch !== undefined &&
    r.leaseEpoch < opts.leaseEpoch
  );
}

function outcomeUnknownError(opts: RunIdempotentOptions, target: string, at: number, cause?: unknown): RuntimeError {
  return new RuntimeError(
    'StepOutcomeUnknown',
    `step ${opts.stepId ?? opts.key} called ${target} at ${new Date(at).toISOString()} and never recorded the outcome ` +
      `(the process died or the call timed out). It is not repeated automatically because the call is not idempotent: ` +
      `check ${target} for that request, then either mark the step done or clear it and retry ` +
      `(idempotency key ${opts.key}).`,
    { details: { key: opts.key, target, dispatchedAt: at, runId: opts.runId, stepId: opts.stepId }, cause },
  );
}

/**
 * Settles a step that failed with `StepOutcomeUnknown`, after a person checked the target:
 * `retry` clears the record so the next attempt calls again; `done` commits `output` as if the
 * call had completed. The key is in the error's message and `details.key`.
 */
export async function settleUnknownOutcome(
  layer: BasePersistenceLayer,
  key: string,
  decision: { action: 'retry' } | { action: 'done'; output: unknown },
  clock: () => number = Date.now,
  ttlSeconds = 7 * 24 * 3600,
): Promise<void> {
  const rec = await layer.getRecord(key);
  if (!rec) throw new RuntimeError('NotFound', `no idempotency record ${key}`);
  if (rec.status !== 'INPROGRESS' || rec.dispatchedAt === undefined) {
    throw new RuntimeError(
      'InvalidInput',
      `step ${key} is ${rec.status}${rec.dispatchedAt === undefined ? ' and never dispatched' : ''}; nothing to settle`,
    );
  }
  if (decision.action === 'retry') {
    await layer.deleteRecord(key, { leaseId: rec.leaseId });
  } else {
    await layer.saveSuccess(key, { leaseId: rec.leaseId, output: decision.output ?? null, nowMs: clock(), ttlSeconds });
  }
}
