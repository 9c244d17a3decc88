/**
 * Kahn's algorithm where, among the nodes whose predecessors are done, the one with the smallest index
 * goes first: the deterministic order the DSL promises (source order breaking ties) and the one the
 * scheduler lays levels out in. `edges` are `[from, to]` indices into `n` nodes; returns undefined
 * when there is a cycle (`findCycle` names one).
 */
export function topologicalOrder(n: number, edges: readonly (readonly [number, number])[]): number[] | undefined {
  const indegree = new Array<number>(n).fill(0);
  const out: number[][] = Array.from({ length: n }, () => []);
  for (const [a, b] of edges) {
    out[a]!.push(b);
    indegree[b]!++;
  }
  return kahn(n, out, indegree);
}

/** The same order over adjacency lists the caller already holds (`succ[v]` and `pred[v]`). */
export function topologicalOrderOfAdjacency(
  succ: readonly (readonly number[])[],
  pred: readonly (readonly number[])[],
): number[] | undefined {
  return kahn(
    succ.length,
    succ,
    pred.map((p) => p.length),
  );
}

function kahn(n: number, out: readonly (readonly number[])[], indegree: number[]): number[] | undefined {
  // A binary min-heap of ready indices keeps this O((n + e) log n) for large documents.
  const heap: number[] = [];
  const push = (v: number): void => {
    heap.push(v);
    let i = heap.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (heap[p]! <= heap[i]!) break;
      [heap[p], heap[i]] = [heap[i]!, heap[p]!];
      i = p;
    }
  };
  const pop = (): number => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && heap[l]! < heap[m]!) m = l;
        if (r < heap.length && heap[r]! < heap[m]!) m = r;
        if (m === i) break;
        [heap[m], heap[i]] = [heap[i]!, heap[m]!];
        i = m;
      }
    }
    return top;
  };
  for (let i = 0; i < n; i++) if (indegree[i] === 0) push(i);
  const order: number[] = [];
  while (heap.length > 0) {
    const v = pop();
    order.push(v);
    for (const w of out[v]!) if (--indegree[w]! === 0) push(w);
  }
  return order.length === n ? order : undefined;
}
