import { createHash } from 'node:crypto';
import { STATE_READ_OUTPUT_MAX_BYTES, type OutputRef, type StepEnvelope } from '@stepforge/contract';
import { RuntimeError } from '../errors/RuntimeError.js';
import type { CommittedStep } from '../persistence/IdempotencyRecord.js';
import type { Runtime } from './Runtime.js';
import { runIdempotent, type DispatchGuard } from './runIdempotent.js';

/** Stable JSON (sorted keys) so equal payloads hash equally. */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

/** The record id of one step execution: step id, loop iteration, role, and a sub-part (turn, tool call). */
export function stepInstanceId(env: StepEnvelope, sub?: string): string {
  let id = env.step.id;
  if (env.step.iteration.length > 0) id += `[${env.step.iteration.join(',')}]`;
  if (env.step.role) id += `:${env.step.role}`;
  if (sub) id += `#${sub}`;
  return id;
}

/**
 * The idempotency key of one step execution: run, step instance, and a hash of what the step
 * was asked to do. A Step Functions retry of the same state hashes the same; a fork is a new run.
 */
export function stepIdempotencyKey(env: StepEnvelope, sub?: string): string {
  const h = createHash('sha256')
    .update(
      stableJson({
        identity: env.step.identity,
        config: env.config,
        inputs: env.inputs,
        toolCall: env.toolCall ?? null,
        turn: env.turn?.index ?? null,
      }),
    )
    .digest('hex')
    .slice(0, 24);
  return `${env.run.id}:${stepInstanceId(env, sub)}:${h}`;
}

/** An output the state machine reads itself (see StepEnvelope.readByStateMachine): inline, or OutputTooLarge. */
function keptInline(env: StepEnvelope, output: unknown): unknown {
  const bytes = Buffer.byteLength(JSON.stringify(output ?? null));
  if (bytes <= STATE_READ_OUTPUT_MAX_BYTES) return output;
  throw new RuntimeError(
    'OutputTooLarge',
    `step '${env.step.id}' returned ${Math.ceil(bytes / 1024)} KiB, but the state machine reads its output itself (a guard, condition, for_each items, a pure step or hand-off routing), where a reference cannot be followed: it must stay under ${STATE_READ_OUTPUT_MAX_BYTES / 1024} KiB; return less (ids or a summary rather than whole documents) and let a later step fetch the rest`,
    { details: { bytes, maxBytes: STATE_READ_OUTPUT_MAX_BYTES } },
  );
}

/** The inline output limit of a step: the runtime's, or the envelope's when lower (a for_each iteration's). */
function inlineLimit(rt: Runtime, env: StepEnvelope): number {
  const own = env.inlineOutputMaxBytes;
  return own !== undefined && own < rt.config.inlineOutputMaxBytes ? own : rt.config.inlineOutputMaxBytes;
}

/** What a step body returns. */
export interface StepBodyResult {
  readonly output: unknown;
  readonly usage?: { inputTokens: number; outputTokens: number; turns?: number; toolCalls?: number };
  /** Extra top-level result fields (e.g. `provider`, `toolCalls`, `done`) committed with the output. */
  readonly extra?: Readonly<Record<string, unknown>>;
}

/** The committed outcome of a step execution. */
export interface ExecutedStep {
  readonly status: 'succeeded' | 'reused';
  readonly output: unknown;
  readonly outputRef?: OutputRef;
  readonly usage: { inputTokens: number; outputTokens: number; turns?: number; toolCalls?: number };
  readonly extra: Readonly<Record<string, unknown>>;
}

/**
 * Runs a step body exactly once per idempotency key, with its run-history record: RUNNING →
 * SUCCEEDED/FAILED, output stored by reference above the inline threshold, secrets redacted.
 * With the runtime's layer, the claim and the commit carry the step record (two writes a step,
 * one for a quick body that is harmless to repeat: see runIdempotent's late claim);
 * only a reused result or a failure writes it separately.
 */
export async function executeStep(
  rt: Runtime,
  env: StepEnvelope,
  options: {
    sub?: string;
    idempotent?: boolean;
    /**
     * Running the body twice is harmless (no side effects, as a model turn or a read-only tool,
     * or idempotent ones), so it may start before its claim (RuntimeConfig.claimAfterMs). By
     * default, what `idempotent` says.
     */
    repeatable?: boolean;
    /**
     * The body reaches outside only through `guard.dispatch` (a tool or a connector), so its claim
     * may wait for the first dispatch and be written with the dispatch marker, one write instead of
     * two (see runIdempotent's claimAtDispatch). Not for a body with effects it does not dispatch
     * (a user function, a code node): those claim before they start.
     */
    claimsAtDispatch?: boolean;
  },
  body: (guard: DispatchGuard) => Promise<StepBodyResult>,
): Promise<ExecutedStep> {
  const instance = stepInstanceId(env, options.sub);
  const folded = rt.idempotency.keepsStepRecords;
  if (!folded) await rt.runs.stepStarted(env.run.id, instance);
  // Whether this attempt counted itself on the step record (its claim, or its one-write commit).
  let claimed = !folded;
  // A late claim only where no finished attempt of the step can be ahead: the state's first
  // attempt (a Step Functions retry may follow an attempt that committed), in a run that is not a
  // fork (a fork finds its carried-over results under its own keys). Those are found, never
  // recomputed; an envelope that does not say which attempt it is claims first.
  const firstTry = env.attempt === 0 && !env.run.parentRunId;
  const claimAfterMs = (options.repeatable ?? options.idempotent) && firstTry ? rt.config.claimAfterMs : undefined;
  const claimAtDispatch = options.claimsAtDispatch === true && firstTry;
  try {
    const { value, reused } = await runIdempotent<CommittedValue>(
      {
        layer: rt.idempotency,
        key: stepIdempotencyKey(env, options.sub),
        clock: rt.config.clock,
        leaseSeconds: rt.config.leaseSeconds,
        ttlSeconds: rt.config.idempotencyTtlSeconds,
        idempotent: options.idempotent ?? false,
        runId: env.run.id,
        stepId: instance,
        ...(rt.config.leaseEpoch !== undefined ? { leaseEpoch: rt.config.leaseEpoch } : {}),
        ...(folded ? { committedStep: stepEnd } : {}),
        ...(claimAfterMs !== undefined ? { claimAfterMs } : {}),
        ...(claimAtDispatch ? { claimAtDispatch } : {}),
        onClaim: () => {
          claimed = true;
        },
      },
      async (guard) => {
        const r = await body(guard);
        const output = rt.redactor.redact(r.output);
        const stored = env.readByStateMachine
          ? { value: keptInline(env, output) }
          : await rt.blobs.maybeStore(output, inlineLimit(rt, env));
        return {
          output: stored.value,
          ...(stored.ref ? { outputRef: stored.ref } : {}),
          usage: r.usage ?? { inputTokens: 0, outputTokens: 0 },
          extra: rt.redactor.redact(r.extra ?? {}),
        };
      },
    );
    const v = value;
    if (!folded || reused) {
      await rt.runs.stepFinished(env.run.id, instance, { status: 'SUCCEEDED', ...stepEnd(v), ...(claimed ? {} : { countAttempt: true }) });
    }
    return {
      status: reused ? 'reused' : 'succeeded',
      output: v.output,
      ...(v.outputRef ? { outputRef: v.outputRef } : {}),
      usage: v.usage,
      extra: v.extra ?? {},
    };
  } catch (e) {
    const err = e as Error;
    await rt.runs
      .stepFinished(env.run.id, instance, {
        status: 'FAILED',
        error: { name: err.name, message: err.message },
        ...(claimed ? {} : { countAttempt: true }),
      })
      .catch(() => undefined);
    throw e;
  }
}

/** What a step commits under its idempotency key. */
interface CommittedValue {
  readonly output: unknown;
  readonly outputRef?: OutputRef;
  readonly usage: ExecutedStep['usage'];
  readonly extra?: Record<string, unknown>;
}

/** The step record's end for a committed value. */
function stepEnd(v: CommittedValue): CommittedStep {
  return { output: v.output, ...(v.outputRef ? { outputRef: v.outputRef.ref } : {}), usage: v.usage };
}
