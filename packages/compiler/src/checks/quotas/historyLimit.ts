// The history events a Standard execution may write (25,000), counted for the worst case of every
// loop, agent turn and retry. Express executions keep no such history.
import type { IrDocument, IrRetry, IrStep, IrWorkflow } from '../../ir/Ir.js';
import { quotaError } from './quotaError.js';

/** History events a Standard execution may write. */
export const MAX_HISTORY_EVENTS = 25_000;

// History events per state kind (entered + exited, plus the task's scheduled/started/succeeded…).
const EV_PASS = 2;
const EV_TASK = 5;
const EV_RETRY = 3;
const EV_MAP = 4;
const EV_ITERATION = 2;

/** How many times one Task may run with a retry policy (the lowering decides, by how it renders retriers). */
export type AttemptsOf = (retry: IrRetry | undefined) => number;

/**
 * The worst-case history events of a run of `doc`; throws a `history_limit` error, naming the step that
 * adds the most, when a Standard run could exceed the quota.
 */
export function historyLimit(doc: IrDocument, attemptsOf: AttemptsOf, express: boolean): number {
  const contributions: { step: IrStep; events: number }[] = [];
  const events = 3 + EV_PASS * 2 + workflowEvents(doc.workflow, contributions, attemptsOf);
  if (express || events <= MAX_HISTORY_EVENTS) return events;
  const worst = contributions.sort((a, b) => b.events - a.events)[0];
  throw quotaError(
    doc,
    'history_limit',
    worst?.step,
    `a run can write up to ${events} history events in the worst case; Standard workflows allow ${MAX_HISTORY_EVENTS}` +
      (worst ? ` (step '${worst.step.id}' alone: ${worst.events})` : ''),
    'lower max_iterations / max_turns / max_tool_calls or retry max_attempts of that step, split the workflow, or compile with --express',
  );
}

function workflowEvents(wf: IrWorkflow, out: { step: IrStep; events: number }[], attemptsOf: AttemptsOf): number {
  // Parallel states add their own events; count 4 per step as an upper bound on the fork/join cost.
  let total = 0;
  for (const s of wf.steps) {
    const e = stepEvents(s, out, attemptsOf) + 4 + (s.when ? EV_PASS : 0);
    out.push({ step: s, events: e });
    total += e;
  }
  return total;
}

function stepEvents(s: IrStep, out: { step: IrStep; events: number }[], attemptsOf: AttemptsOf): number {
  const task = EV_TASK + (attemptsOf(s.retry) - 1) * EV_RETRY;
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
      const body = c.body ? workflowEvents(c.body, out, attemptsOf) : 0;
      return EV_MAP + (c.maxIterations ?? 50) * (EV_ITERATION + EV_PASS + body);
    }
    case 'while': {
      const body = c.body ? workflowEvents(c.body, out, attemptsOf) : 0;
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
