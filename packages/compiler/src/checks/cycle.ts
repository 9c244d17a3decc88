// Steps that depend on one another in a circle can never start. Every front-end with a dependency
// graph finds the cycle with graph/findCycle and reports it here, in its own notation: the chain as
// it writes edges (`a > b > a`), the workflow DSL with arrows from the cycle's earliest step. Code
// workflows that start one another (useWorkflow) would nest executions without end: callCycle.
import { findCycle } from '../graph/findCycle.js';
import type { CheckFinding } from './CheckFinding.js';

/** A cycle as node indices (`[a, b, a]`, a self-loop `[a, a]`) and the names of those nodes. */
export interface Cycle {
  readonly nodes: readonly number[];
  readonly names: readonly string[];
}

/**
 * One cycle of the graph of `n` nodes, or undefined when it has none. `fromEarliest` starts it at its
 * smallest index (the DSL names a cycle from its earliest step); otherwise its last pair is the edge that
 * closed it (where the chain points its caret).
 */
export function dependencyCycle(
  n: number,
  edges: readonly (readonly [number, number])[],
  nameOf: (node: number) => string,
  fromEarliest = false,
): Cycle | undefined {
  const nodes = findCycle(n, edges, { startAtSmallest: fromEarliest });
  return nodes === undefined ? undefined : { nodes, names: nodes.map(nameOf) };
}

/** The chain's wording: its `>` notation, and a self-loop said as such. */
export function chainCycle(cycle: Cycle): CheckFinding & { readonly code: 'cycle' } {
  const { names } = cycle;
  return {
    code: 'cycle',
    message: names.length === 2 ? `cycle: '${names[0]}' depends on itself (${names.join(' > ')})` : `cycle: ${names.join(' > ')}`,
    details: { path: names },
  };
}

/** The workflow DSL's wording: the steps of the cycle, and where dependencies come from. */
export function stepCycle(cycle: Cycle): CheckFinding {
  return {
    code: 'cycle',
    message: `dependency cycle: ${cycle.names.join(' → ')}`,
    details: { path: cycle.names },
    hint: 'dependencies come from after: and from every steps.<name> reference',
  };
}

/**
 * A DSL step that reads itself (`reader` is `step`), or a step inside a loop's body that reads the loop
 * (which finishes only after its body): a cycle of one step.
 */
export function readsItself(step: string, reader: string): CheckFinding {
  return {
    code: 'cycle',
    message:
      step === reader
        ? `step '${reader}' depends on itself`
        : `step '${reader}' inside '${step}' reads '${step}', which finishes only after its body`,
    details: { path: [step, reader, step] },
  };
}

/**
 * The ids from `path` through `workflow` and the workflows it starts (`childrenOf`) back to `target`,
 * if they lead there: a workflow that, through its children, starts itself.
 */
export function callCycle<W>(
  workflow: W,
  target: string,
  idOf: (w: W) => string,
  childrenOf: (w: W) => Iterable<W>,
  path: readonly string[] = [],
  seen: Set<string> = new Set(),
): string[] | undefined {
  const id = idOf(workflow);
  if (id === target) return [...path, id];
  if (seen.has(id)) return undefined;
  seen.add(id);
  for (const child of childrenOf(workflow)) {
    const found = callCycle(child, target, idOf, childrenOf, [...path, id], seen);
    if (found !== undefined) return found;
  }
  return undefined;
}
