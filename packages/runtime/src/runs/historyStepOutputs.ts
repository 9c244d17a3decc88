// A step with no Lambda call (a conditional, a for_each, a while, a Contenox route) has no step record
// to hold its output: what it produced is the value its states assigned to the step's variable,
// which the execution history keeps on each state's exit event (`assignedVariables`, as on AWS).
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import type { CatalogStep } from './ports.js';

/** The longest variable name Step Functions accepts (the compiler truncates the step's variable to it). */
const MAX_VARIABLE_NAME = 80;

/**
 * The variable the compiler keeps step `id`'s output in: `s_` and the id with every character other
 * than a letter, digit or `_` made `_` (the compiler's NameAllocator.stepVariable; the runtime does not
 * import the compiler). A step whose name clashed with another's got a suffix there and is not found here.
 */
export function stepOutputVariable(id: string): string {
  return `s_${id}`.replace(/[^A-Za-z0-9_]/g, '_').slice(0, MAX_VARIABLE_NAME);
}

/**
 * The outputs of the steps without a Lambda call, by step id: for each, the value last assigned to its
 * variable on the exit of one of its own states (the last iteration's, in a loop body). A step that
 * never assigned it (skipped, failed, or its variable folded away) has none.
 */
export function historyStepOutputs(steps: readonly CatalogStep[], history: readonly HistoryEvent[]): Map<string, unknown> {
  // Each state belongs to one step; its exits are read once, in history order, so the last one wins.
  const byState = new Map<string, { id: string; variable: string }>();
  for (const s of steps) {
    if (s.lambda) continue;
    const variable = stepOutputVariable(s.id);
    for (const state of s.states) byState.set(state, { id: s.id, variable });
  }
  const outputs = new Map<string, unknown>();
  if (byState.size === 0) return outputs;
  for (const e of history) {
    const d = e.stateExitedEventDetails;
    const assigned = d?.assignedVariables;
    if (!d || !assigned) continue;
    const step = byState.get(d.name ?? '');
    const text = step ? assigned[step.variable] : undefined;
    if (step === undefined || text === undefined) continue;
    try {
      outputs.set(step.id, JSON.parse(text) as unknown);
    } catch {
      outputs.set(step.id, text);
    }
  }
  return outputs;
}
