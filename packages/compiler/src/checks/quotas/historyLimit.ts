// The history events a Standard execution may write (25,000), counted for the worst case of every
// loop, agent turn and retry. Express executions keep no such history.
import type { IrDocument, IrRetry, IrRoute, IrStep, IrWorkflow } from '../../ir/Ir.js';
import { quotaError } from './quotaError.js';
import { stronglyConnectedComponents } from '../../graph/stronglyConnectedComponents.js';

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
    doc.workflow.routes
      ? 'lower the `when` count of the edge_traversed_at_least branch that ends its loop, or the retries of that task, or compile with --express'
      : 'lower max_iterations / max_turns / max_tool_calls or retry max_attempts of that step, split the workflow, or compile with --express',
  );
}

function workflowEvents(wf: IrWorkflow, out: { step: IrStep; events: number }[], attemptsOf: AttemptsOf): number {
  // Parallel states add their own events; count 4 per step as an upper bound on the fork/join cost.
  let total = 0;
  const runs = wf.routes ? routedRuns(wf.routes) : undefined;
  for (const [i, s] of wf.steps.entries()) {
    const once = stepEvents(s, wf, out, attemptsOf);
    // A routed step inside a bounded cycle runs once per time round it (see routedRuns).
    const e = (once + 4 + (s.when ? EV_PASS : 0)) * (runs?.[i] ?? 1);
    out.push({ step: s, events: e });
    total += e;
  }
  return total;
}

/** The events one run of `s` (a step of `wf`) may write. */
function stepEvents(s: IrStep, wf: IrWorkflow, out: { step: IrStep; events: number }[], attemptsOf: AttemptsOf): number {
  const task = EV_TASK + (attemptsOf(s.retry) - 1) * EV_RETRY;
  // A Contenox task that hands its model's tool calls over, and the step that runs them (a Map of
  // at most the model's tool-call budget).
  if (s.handsOverToolCalls) return task + EV_PASS;
  if (s.runsToolCallsOf !== undefined)
    return EV_MAP + (wf.steps.find((x) => x.id === s.runsToolCallsOf)?.budget?.maxToolCalls ?? 1) * (EV_ITERATION + EV_TASK);
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

/**
 * How many times each step of a routed workflow may run: once, or, in a cycle, one more time than the
 * lowest `edge_traversed_at_least` count that ends it (the counted edge is taken once per time round,
 * and the branch is checked before the next). The cycle check has made sure every cycle has one.
 */
function routedRuns(routes: readonly IrRoute[]): number[] {
  const succ = routes.map((r) => {
    const next = new Set<number>();
    for (const b of r.branches) if (b.goto !== 'end') next.add(b.goto);
    if (r.onFailure !== undefined) next.add(r.onFailure);
    return [...next];
  });
  const { components, componentOf } = stronglyConnectedComponents(succ);
  const runs = routes.map(() => 1);
  for (const [c, members] of components.entries()) {
    const cyclic = members.length > 1 || succ[members[0]!]!.includes(members[0]!);
    if (!cyclic) continue;
    const inside = (k: number | 'end') => k !== 'end' && componentOf[k] === c;
    let bound: number | undefined;
    for (const k of members)
      for (const b of routes[k]!.branches)
        if (b.operator === 'edge_traversed_at_least' && !inside(b.goto) && b.edge && inside(b.edge[0]) && inside(b.edge[1])) {
          const n = Number(b.when);
          if (Number.isFinite(n)) bound = Math.min(bound ?? n, n);
        }
    if (bound !== undefined) for (const k of members) runs[k] = bound + 1;
  }
  return runs;
}
