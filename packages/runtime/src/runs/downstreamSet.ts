import type { WorkflowEntry } from './ports.js';

/**
 * The steps `restart --from step` re-runs: the step, everything downstream of it, every step
 * nested inside one of those, and — when the step is nested — its enclosing steps and their
 * downstream, because their outputs change too.
 */
export function downstreamSet(entry: WorkflowEntry, step: string): Set<string> {
  const set = new Set<string>();
  const children = new Map<string, string[]>();
  for (const [a, b] of entry.edges) children.set(a, [...(children.get(a) ?? []), b]);
  const parentOf = new Map(entry.steps.filter((s) => s.parent !== undefined).map((s) => [s.id, s.parent!]));
  const seen = new Set<string>();
  const add = (id: string, nested: boolean): void => {
    const key = `${id}/${nested}`;
    if (seen.has(key)) return;
    seen.add(key);
    set.add(id);
    for (const c of children.get(id) ?? []) add(c, true);
    // Siblings inside an enclosing loop keep their records: only what reads the step re-runs.
    if (nested) for (const s of entry.steps) if (s.parent === id) add(s.id, true);
    const p = parentOf.get(id);
    if (p !== undefined) add(p, false);
  };
  add(step, true);
  return set;
}
