/** The strongly connected parts of a directed graph. */
export interface StronglyConnected {
  /** The parts, in the order Tarjan's algorithm closes them (a part before any part that reaches it). */
  readonly components: readonly (readonly number[])[];
  /** `componentOf[v]`: the index in `components` of node v's part. */
  readonly componentOf: readonly number[];
}

/**
 * Tarjan's algorithm over `succ[v]` (the nodes v leads to), iterative so that a graph of thousands of
 * nodes cannot exhaust the call stack. Deterministic: roots in index order, successors in list order.
 */
export function stronglyConnectedComponents(succ: readonly (readonly number[])[]): StronglyConnected {
  const n = succ.length;
  const idx = new Array<number>(n).fill(-1);
  const low = new Array<number>(n).fill(0);
  const on = new Array<boolean>(n).fill(false);
  const stack: number[] = [];
  const comp = new Array<number>(n).fill(-1);
  const comps: number[][] = [];
  let counter = 0;
  for (let s = 0; s < n; s++) {
    if (idx[s] !== -1) continue;
    const work: [number, number][] = [[s, 0]];
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const [v, k] = top;
      if (k === 0) {
        idx[v] = low[v] = counter++;
        stack.push(v);
        on[v] = true;
      }
      if (k < succ[v]!.length) {
        top[1] = k + 1;
        const w = succ[v]![k]!;
        if (idx[w] === -1) work.push([w, 0]);
        else if (on[w]) low[v] = Math.min(low[v]!, idx[w]!);
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const p = work[work.length - 1]![0];
        low[p] = Math.min(low[p]!, low[v]!);
      }
      if (low[v] === idx[v]) {
        const c: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          on[w] = false;
          comp[w] = comps.length;
          c.push(w);
        } while (w !== v);
        comps.push(c);
      }
    }
  }
  return { components: comps, componentOf: comp };
}
