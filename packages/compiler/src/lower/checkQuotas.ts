// Step Functions quotas checked at compile time, each failure a named error that says what to change:
// definition size, worst-case history events (Standard), and payload budgets per state.
import { StepforgeError, INLINE_OUTPUT_MAX_BYTES, ITERATION_INLINE_OUTPUT_MAX_BYTES, STATE_READ_OUTPUT_MAX_BYTES, MAX_EXECUTION_INPUT_BYTES } from '@stepforge/contract';
import type { IrDocument, IrStep, IrWorkflow } from '../ir/Ir.js';
import { jsonLength } from './jsonLength.js';
import { routesOnItsAgents } from './stateReadSteps.js';
import { worstCaseAttempts } from './renderRetry.js';

/** Largest definition Step Functions accepts (bytes, UTF-8). */
export const MAX_DEFINITION_BYTES = 1024 * 1024;
/** History events a Standard execution may write. */
export const MAX_HISTORY_EVENTS = 25_000;
/** Largest state input/output / Task payload: Step Functions' one payload quota, as for an execution's input. */
export const MAX_PAYLOAD_BYTES = MAX_EXECUTION_INPUT_BYTES;
/** Handlers return outputs larger than this by reference (`outputRef`); the compiler budgets with it. */
export const MAX_INLINE_OUTPUT_BYTES = INLINE_OUTPUT_MAX_BYTES;
/** The execution input the compiler budgets for (the run API rejects larger inputs). */
export const ASSUMED_INPUT_BYTES = 32 * 1024;

/** Worst-case figures the checks computed (also shown by `compile --explain`). */
export interface QuotaReport {
  readonly definitionBytes: number;
  readonly worstCaseHistoryEvents: number;
  /** Largest estimated payload of any state, and which step it belongs to. */
  readonly largestPayloadBytes: number;
  readonly largestPayloadStep?: string;
}

// History events per state kind (entered + exited, plus the task's scheduled/started/succeeded…).
const EV_PASS = 2;
const EV_TASK = 5;
const EV_RETRY = 3;
const EV_MAP = 4;
const EV_ITERATION = 2;

/** Checks every quota; throws the first violation as a StepforgeError. */
export function checkQuotas(doc: IrDocument, definition: unknown, options: {
  express?: boolean;
  /** The definition's UTF-8 size, when the caller measured it. */
  definitionBytes?: number;
  /** Steps whose output the state machine reads itself (stateReadSteps): counted at STATE_READ_OUTPUT_MAX_BYTES. */
  stateReads?: ReadonlySet<string>;
} = {}): QuotaReport {
  const definitionBytes = options.definitionBytes ?? Buffer.byteLength(JSON.stringify(definition), 'utf8');
  if (definitionBytes > MAX_DEFINITION_BYTES) {
    throw quotaError(doc, 'definition_too_large', undefined,
      `the compiled definition is ${definitionBytes} bytes; Step Functions accepts at most ${MAX_DEFINITION_BYTES}`,
      'split the workflow into smaller workflows, or shorten long prompts/configuration (move them into agent declarations)');
  }
  const contributions: { step: IrStep; events: number }[] = [];
  const events = 3 + EV_PASS * 2 + workflowEvents(doc.workflow, contributions);
  if (!options.express && events > MAX_HISTORY_EVENTS) {
    const worst = contributions.sort((a, b) => b.events - a.events)[0];
    throw quotaError(doc, 'history_limit', worst?.step,
      `a run can write up to ${events} history events in the worst case; Standard workflows allow ${MAX_HISTORY_EVENTS}` +
        (worst ? ` (step '${worst.step.id}' alone: ${worst.events})` : ''),
      'lower max_iterations / max_turns / max_tool_calls or retry max_attempts of that step, split the workflow, or compile with --express');
  }
  const payload = { bytes: 0, step: undefined as string | undefined };
  workflowPayload(doc, doc.workflow, new Map(), payload, options.stateReads ?? new Set());
  return { definitionBytes, worstCaseHistoryEvents: events, largestPayloadBytes: payload.bytes, largestPayloadStep: payload.step };
}

function quotaError(doc: IrDocument, code: string, step: IrStep | undefined, message: string, hint: string): StepforgeError {
  return new StepforgeError(code, message, {
    location: step?.location ?? { file: doc.file, line: 1, column: 1 },
    source: doc.source,
    hint,
    details: step ? { step: step.id } : undefined,
  });
}

function workflowEvents(wf: IrWorkflow, out: { step: IrStep; events: number }[]): number {
  // Parallel states add their own events; count 4 per step as an upper bound on the fork/join cost.
  let total = 0;
  for (const s of wf.steps) {
    const e = stepEvents(s, out) + 4 + (s.when ? EV_PASS : 0);
    out.push({ step: s, events: e });
    total += e;
  }
  return total;
}

function stepEvents(s: IrStep, out: { step: IrStep; events: number }[]): number {
  const task = EV_TASK + (worstCaseAttempts(s.retry) - 1) * EV_RETRY;
  const c = s.composite ?? {};
  switch (s.kind) {
    case 'pure':
    case 'conditional':
      return EV_PASS;
    case 'model': {
      if (s.tools.length === 0 || !s.budget) return task;
      const { maxTurns, maxToolCalls } = s.budget;
      return EV_PASS + maxTurns * (task + EV_PASS) + (maxTurns - 1) * EV_MAP + maxToolCalls * (EV_ITERATION + task);
    }
    case 'for_each': {
      const body = c.body ? workflowEvents(c.body, out) : 0;
      return EV_MAP + (c.maxIterations ?? 50) * (EV_ITERATION + EV_PASS + body);
    }
    case 'while': {
      const body = c.body ? workflowEvents(c.body, out) : 0;
      return EV_PASS + (c.maxIterations ?? 10) * (body + EV_PASS);
    }
    case 'judge_loop':
      return EV_PASS + (c.maxIterations ?? 5) * (2 * task + EV_PASS);
    case 'parallel_analyzer':
      return EV_MAP + (c.analysts?.length ?? 0) * task + task;
    case 'handoff_router': {
      const hops = c.maxHandoffs ?? 3;
      return task + (hops + 1) * EV_PASS + hops * task;
    }
    default:
      return task;
  }
}

/** Upper bound of each step's value (bytes) in state, and the largest payload any state carries. */
function workflowPayload(doc: IrDocument, wf: IrWorkflow, outer: Map<string, number>, max: { bytes: number; step: string | undefined }, stateReads: ReadonlySet<string>, inMap = false): number {
  const sizes = new Map(outer);
  let all = 0;
  for (const s of wf.steps) {
    const readBytes = readsBytes(s, sizes);
    const staticBytes = jsonLength(s.config) + jsonLength(s.input ?? null) + 1024;
    // An output the state machine reads itself stays inline up to the larger cap; one inside a for_each
    // iteration is stored by reference above the iteration's smaller one (see StepEnvelope); +200 for a reference.
    // A judge_loop or handoff_router routes on its agents' answers, so they (and its result) stay inline too.
    const inline = stateReads.has(s.id) || routesOnItsAgents(s);
    let value = (inline ? STATE_READ_OUTPUT_MAX_BYTES : inMap ? ITERATION_INLINE_OUTPUT_MAX_BYTES : MAX_INLINE_OUTPUT_BYTES) + 200;
    let payload = staticBytes + ASSUMED_INPUT_BYTES + 2 * readBytes;
    const c = s.composite ?? {};
    if (s.kind === 'pure') value = Math.min(readBytes + ASSUMED_INPUT_BYTES, MAX_PAYLOAD_BYTES);
    if (s.kind === 'conditional') value = 8;
    if (s.kind === 'for_each') {
      const body = c.body ? workflowPayload(doc, c.body, sizes, max, stateReads, true) : 0;
      value = (c.maxIterations ?? 50) * (body + 2);
      payload = Math.max(payload, value);
    }
    if (s.kind === 'while' && c.body) value = workflowPayload(doc, c.body, sizes, max, stateReads, inMap);
    if (s.kind === 'parallel_analyzer') payload += 2 * (c.analysts?.length ?? 0) * MAX_INLINE_OUTPUT_BYTES;
    if (payload > max.bytes) {
      max.bytes = payload;
      max.step = s.id;
    }
    if (payload > MAX_PAYLOAD_BYTES) {
      throw quotaError(doc, 'payload_budget', s,
        `step '${s.id}' may carry up to ${Math.ceil(payload / 1024)} KiB through one state; Step Functions allows ${MAX_PAYLOAD_BYTES / 1024} KiB`,
        s.kind === 'for_each'
          ? `lower max_iterations (each item may add up to ${Math.ceil((value / Math.max(1, c.maxIterations ?? 50)) / 1024)} KiB), or aggregate inside the loop`
          : 'read fewer step outputs in this step, or split it');
    }
    sizes.set(s.id, value);
    all = value;
  }
  return wf.resultStep !== undefined ? sizes.get(wf.steps[wf.resultStep]!.id) ?? all : all;
}

/** Sum of the value bounds of the steps `s` reads, each counted once (no flattened array per step). */
function readsBytes(s: IrStep, sizes: ReadonlyMap<string, number>): number {
  const seen = new Set<string>();
  let sum = 0;
  for (const e of [s.input, s.when, s.expr, s.composite?.items, s.composite?.condition]) {
    for (const r of e?.reads ?? []) {
      if (seen.has(r)) continue;
      seen.add(r);
      sum += sizes.get(r) ?? MAX_INLINE_OUTPUT_BYTES;
    }
  }
  return sum;
}
