// Step Functions quotas checked at compile time, each failure a named error that says what to change:
// definition size, worst-case history events (Standard), and payload budgets per state. Each quota
// is its own file; this runs them in order and gathers the figures `compile --explain` shows.
import type { IrDocument, IrStep } from '../../ir/Ir.js';
import { checkDefinitionSize } from './definitionSize.js';
import { historyLimit, type AttemptsOf } from './historyLimit.js';
import { payloadBudget } from './payloadBudget.js';

/** Worst-case figures the checks computed (also shown by `compile --explain`). */
export interface QuotaReport {
  readonly definitionBytes: number;
  readonly worstCaseHistoryEvents: number;
  /** Largest estimated payload of any state, and which step it belongs to. */
  readonly largestPayloadBytes: number;
  readonly largestPayloadStep?: string;
}

/** What the quotas need to know of the lowering besides the IR. */
export interface QuotaOptions {
  readonly express?: boolean;
  /** The definition's UTF-8 size, when the caller measured it. */
  readonly definitionBytes?: number;
  /** How many times one Task may run under a retry policy, as the lowering renders its retriers. */
  readonly attemptsOf: AttemptsOf;
  /** Steps whose output stays inline up to STATE_READ_OUTPUT_MAX_BYTES (the state machine reads it itself). */
  readonly readInline: (step: IrStep) => boolean;
}

/** Checks every quota; throws the first violation as a StepforgeError. */
export function checkQuotas(doc: IrDocument, definition: unknown, options: QuotaOptions): QuotaReport {
  const definitionBytes = options.definitionBytes ?? Buffer.byteLength(JSON.stringify(definition), 'utf8');
  checkDefinitionSize(doc, definitionBytes);
  const events = historyLimit(doc, options.attemptsOf, options.express ?? false);
  const payload = payloadBudget(doc, options.readInline);
  return { definitionBytes, worstCaseHistoryEvents: events, largestPayloadBytes: payload.bytes, largestPayloadStep: payload.step };
}
