// A Contenox chain may loop, but something must end each loop: every strongly connected part of its
// transition graph needs an `edge_traversed_at_least` branch that leaves it (the loader puts defaults
// last, where Contenox tries them).
// Without one the loop may spin until Step Functions' 25,000-event history cap fails the run.
import type { SourceLocation } from '@stepforge/contract';
import { stronglyConnectedComponents } from '../graph/stronglyConnectedComponents.js';
import type { CheckFinding } from './CheckFinding.js';

/** A transition target: a task's position in the chain, or the end. */
type Target = number | 'end';

/** What the rule reads of a task: its transitions (by task position) and where it is written. */
export interface LoopingTask {
  readonly id: string;
  /** The task's position in the chain, which targets name. */
  readonly index: number;
  readonly location: SourceLocation;
  readonly branches: readonly { readonly operator: string; readonly goto: Target; readonly edge?: readonly [number, Target] }[];
  readonly onFailure?: number;
}

/** One `unbounded_cycle` finding per loop nothing ends, at its first task, in the order of the parts found. */
export function unboundedCycles(
  tasks: readonly LoopingTask[],
): { finding: CheckFinding & { readonly hint: string }; location: SourceLocation }[] {
  const byIndex = new Map(tasks.map((t, k) => [t.index, k]));
  const succ = tasks.map((t) => {
    const s = new Set<number>();
    for (const b of t.branches) if (b.goto !== 'end' && byIndex.has(b.goto)) s.add(byIndex.get(b.goto)!);
    if (t.onFailure !== undefined && byIndex.has(t.onFailure)) s.add(byIndex.get(t.onFailure)!);
    return [...s];
  });
  const { components: comps, componentOf: comp } = stronglyConnectedComponents(succ);
  const out: { finding: CheckFinding & { readonly hint: string }; location: SourceLocation }[] = [];
  for (const c of comps) {
    const cyclic = c.length > 1 || succ[c[0]!]!.includes(c[0]!);
    if (!cyclic) continue;
    const id = comp[c[0]!]!;
    const inside = (g: Target) => g !== 'end' && byIndex.has(g) && comp[byIndex.get(g)!] === id;
    const bounded = c.some((k) => {
      for (const b of tasks[k]!.branches) {
        if (b.operator === 'default') return false;
        if (b.operator === 'edge_traversed_at_least' && !inside(b.goto) && b.edge && inside(b.edge[0]) && inside(b.edge[1])) return true;
      }
      return false;
    });
    if (bounded) continue;
    const members = [...c].sort((a, b) => a - b).map((k) => tasks[k]!);
    out.push({
      finding: {
        code: 'unbounded_cycle',
        message: `tasks ${members.map((t) => `'${t.id}'`).join(' → ')} form a cycle that nothing bounds`,
        hint: `add a first branch {"operator": "edge_traversed_at_least", "edge": "${members[0]!.id}->${members[1 % members.length]!.id}", "when": "5", "goto": "end"} to one of them (before any default): a run's history is capped at 25,000 events`,
        details: { cycle: members.map((t) => t.id) },
      },
      location: members[0]!.location,
    });
  }
  return out;
}
