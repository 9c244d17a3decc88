/** How `findCycle` reports the cycle it meets. */
export interface FindCycleOptions {
  /**
   * Rotate the cycle so that it starts (and ends) at its smallest node index: the DSL names a cycle from
   * its earliest step. Without it the path starts at the node the depth-first walk re-entered, so its
   * last pair is the edge that closed the cycle (the chain front-end points its caret at that edge).
   */
  readonly startAtSmallest?: boolean;
}

/**
 * Returns one cycle of a directed graph as a node path that starts and ends at the same node
 * (`[a, b, a]`; a self-loop is `[a, a]`), or undefined when the graph is acyclic. `edges` are
 * `[from, to]` indices into `n` nodes. Iterative depth-first search from the lowest index, children
 * in ascending order, so the answer is deterministic and deep graphs cannot overflow the stack.
 */
export function findCycle(n: number, edges: readonly (readonly [number, number])[], options: FindCycleOptions = {}): number[] | undefined {
  const out: number[][] = Array.from({ length: n }, () => []);
  for (const [a, b] of edges) out[a]!.push(b);
  for (const list of out) list.sort((x, y) => x - y);
  // 0 = unvisited, 1 = on the current path, 2 = finished.
  const state = new Uint8Array(n);
  const path: number[] = [];
  const nextChild: number[] = [];
  for (let root = 0; root < n; root++) {
    if (state[root] !== 0) continue;
    path.push(root);
    nextChild.push(0);
    state[root] = 1;
    while (path.length > 0) {
      const top = path.length - 1;
      const node = path[top]!;
      const children = out[node]!;
      const k = nextChild[top]!;
      if (k >= children.length) {
        state[node] = 2;
        path.pop();
        nextChild.pop();
        continue;
      }
      nextChild[top] = k + 1;
      const child = children[k]!;
      if (state[child] === 1) {
        const cycle = path.slice(path.indexOf(child));
        if (!options.startAtSmallest) return [...cycle, child];
        const min = cycle.indexOf(Math.min(...cycle));
        const rotated = [...cycle.slice(min), ...cycle.slice(0, min)];
        return [...rotated, rotated[0]!];
      }
      if (state[child] === 0) {
        state[child] = 1;
        path.push(child);
        nextChild.push(0);
      }
    }
  }
  return undefined;
}
