/**
 * Kahn's algorithm where, among the steps whose dependencies are done, the one earliest in source
 * order goes first — the deterministic execution order the DSL promises. `edges` are `[from, to]`
 * indices into a list of `n` nodes; returns undefined when there is a cycle.
 */
export function topologicalOrder(n: number, edges: readonly (readonly [number, number])[]): number[] | undefined {
  const indegree = new Array<number>(n).fill(0);
  const out: number[][] = Array.from({ length: n }, () => []);
  for (const [a, b] of edges) {
    out[a]!.push(b);
    indegree[b]!++;
  }
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

/**
 * One cycle of the graph as a node path that starts and ends at the same node (rotated so that it
 * starts at its smallest index), or undefined when the graph is acyclic.
 */
export function findCycle(n: number, edges: readonly (readonly [number, number])[]): number[] | undefined {
  const out: number[][] = Array.from({ length: n }, () => []);
  for (const [a, b] of edges) out[a]!.push(b);
  for (const list of out) list.sort((x, y) => x - y);
  const state = new Array<0 | 1 | 2>(n).fill(0);
  const stack: number[] = [];
  // Iterative DFS so a 1,000-step chain cannot overflow the call stack.
  for (let s = 0; s < n; s++) {
    if (state[s] !== 0) continue;
    const iters: number[] = [0];
    stack.push(s);
    state[s] = 1;
    while (stack.length > 0) {
      const v = stack[stack.length - 1]!;
      const i = iters[iters.length - 1]!;
      if (i < out[v]!.length) {
        iters[iters.length - 1] = i + 1;
        const w = out[v]![i]!;
        if (state[w] === 1) {
          const cycle = stack.slice(stack.indexOf(w));
          const min = cycle.indexOf(Math.min(...cycle));
          const rotated = [...cycle.slice(min), ...cycle.slice(0, min)];
          return [...rotated, rotated[0]!];
        }
        if (state[w] === 0) {
          state[w] = 1;
          stack.push(w);
          iters.push(0);
        }
      } else {
        state[v] = 2;
        stack.pop();
        iters.pop();
      }
    }
  }
  return undefined;
}
