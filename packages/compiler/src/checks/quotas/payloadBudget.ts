// Step Functions' payload quota (256 KiB per state input/output and Task payload), budgeted per state
// from upper bounds of what each step reads and produces.
import {
  INLINE_OUTPUT_MAX_BYTES,
  ITERATION_INLINE_OUTPUT_MAX_BYTES,
  MAX_EXECUTION_INPUT_BYTES,
  STATE_READ_OUTPUT_MAX_BYTES,
} from '@stepforge/contract';
import type { IrDocument, IrStep, IrWorkflow } from '../../ir/Ir.js';
import { jsonLength } from './jsonLength.js';
import { quotaError } from './quotaError.js';

/** Largest state input/output / Task payload: Step Functions' one payload quota, as for an execution's input. */
export const MAX_PAYLOAD_BYTES = MAX_EXECUTION_INPUT_BYTES;
/** Handlers return outputs larger than this by reference (`outputRef`); the compiler budgets with it. */
export const MAX_INLINE_OUTPUT_BYTES = INLINE_OUTPUT_MAX_BYTES;
/** The execution input the compiler budgets for (the run API rejects larger inputs). */
export const ASSUMED_INPUT_BYTES = 32 * 1024;

/** What a step without a composite part reads its loop fields from (one object, not one per step). */
const NO_COMPOSITE: NonNullable<IrStep['composite']> = Object.freeze({});

/** The largest payload any state carries, and which step's state it is. */
export interface PayloadBudget {
  readonly bytes: number;
  readonly step: string | undefined;
}

/**
 * Budgets every state's payload; throws a `payload_budget` error at the first state over the quota.
 * `readInline` says which steps' outputs stay inline up to the larger state-read cap (the state
 * machine reads them itself, or the step routes on its agents' answers): the lowering decides which.
 */
export function payloadBudget(doc: IrDocument, readInline: (step: IrStep) => boolean): PayloadBudget {
  const max = { bytes: 0, step: undefined as string | undefined };
  workflowPayload(doc, doc.workflow, new Map(), max, readInline);
  return max;
}

/** Upper bound of each step's value (bytes) in state, and the largest payload any state carries. */
function workflowPayload(
  doc: IrDocument,
  wf: IrWorkflow,
  outer: Map<string, number>,
  max: { bytes: number; step: string | undefined },
  readInline: (step: IrStep) => boolean,
  inMap = false,
): number {
  const sizes = new Map(outer);
  let all = 0;
  for (const s of wf.steps) {
    const readBytes = readsBytes(s, sizes);
    const staticBytes = jsonLength(s.config) + jsonLength(s.input ?? null) + 1024;
    // An output the state machine reads itself stays inline up to the larger cap; one inside a for_each
    // iteration is stored by reference above the iteration's smaller one (see StepEnvelope); +200 for a reference.
    // A judge_loop or handoff_router routes on its agents' answers, so they (and its result) stay inline too.
    let value = (readInline(s) ? STATE_READ_OUTPUT_MAX_BYTES : inMap ? ITERATION_INLINE_OUTPUT_MAX_BYTES : MAX_INLINE_OUTPUT_BYTES) + 200;
    let payload = staticBytes + ASSUMED_INPUT_BYTES + 2 * readBytes;
    const c = s.composite ?? NO_COMPOSITE;
    if (s.kind === 'pure') value = Math.min(readBytes + ASSUMED_INPUT_BYTES, MAX_PAYLOAD_BYTES);
    if (s.kind === 'conditional') value = 8;
    if (s.kind === 'for_each') {
      const body = c.body ? workflowPayload(doc, c.body, sizes, max, readInline, true) : 0;
      value = (c.maxIterations ?? 50) * (body + 2);
      payload = Math.max(payload, value);
    }
    if (s.kind === 'while' && c.body) value = workflowPayload(doc, c.body, sizes, max, readInline, inMap);
    if (s.kind === 'parallel_analyzer') payload += 2 * (c.analysts?.length ?? 0) * MAX_INLINE_OUTPUT_BYTES;
    if (payload > max.bytes) {
      max.bytes = payload;
      max.step = s.id;
    }
    if (payload > MAX_PAYLOAD_BYTES) {
      throw quotaError(
        doc,
        'payload_budget',
        s,
        `step '${s.id}' may carry up to ${Math.ceil(payload / 1024)} KiB through one state; Step Functions allows ${MAX_PAYLOAD_BYTES / 1024} KiB`,
        s.kind === 'for_each'
          ? `lower max_iterations (each item may add up to ${Math.ceil(value / Math.max(1, c.maxIterations ?? 50) / 1024)} KiB), or aggregate inside the loop`
          : 'read fewer step outputs in this step, or split it',
      );
    }
    sizes.set(s.id, value);
    all = value;
  }
  return wf.resultStep !== undefined ? (sizes.get(wf.steps[wf.resultStep]!.id) ?? all) : all;
}

/** The steps already counted by readsBytes for the step it is adding up (a scratch list: it runs once per step). */
const COUNTED: string[] = [];

/** Sum of the value bounds of the steps `s` reads, each counted once (no Set and no list of expressions per step). */
function readsBytes(s: IrStep, sizes: ReadonlyMap<string, number>): number {
  COUNTED.length = 0;
  const c = s.composite;
  return (
    exprReadsBytes(s.input, sizes) +
    exprReadsBytes(s.when, sizes) +
    exprReadsBytes(s.expr, sizes) +
    exprReadsBytes(c?.items, sizes) +
    exprReadsBytes(c?.condition, sizes)
  );
}

/** The bounds of the steps `e` reads that readsBytes has not counted yet for this step. */
function exprReadsBytes(e: { readonly reads: readonly string[] } | undefined, sizes: ReadonlyMap<string, number>): number {
  if (e === undefined) return 0;
  let sum = 0;
  for (let i = 0; i < e.reads.length; i++) {
    const r = e.reads[i]!;
    if (COUNTED.includes(r)) continue;
    COUNTED.push(r);
    sum += sizes.get(r) ?? MAX_INLINE_OUTPUT_BYTES;
  }
  return sum;
}
