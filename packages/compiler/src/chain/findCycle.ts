/**
 * Returns one cycle of a directed graph as a node path that starts and ends at the same node
 * (`[a, b, a]`; a self-loop is `[a, a]`), or undefined when the graph is acyclic. Iterative DFS from
 * the lowest index, so the answer is deterministic and deep graphs cannot overflow the stack.
 */
export function findCycle(nodeCount: number, edges: readonly (readonly [number, number])[]): number[] | undefined {
  const adjacency: number[][] = Array.from({ length: nodeCount }, () => []);
  for (const [p, c] of edges) adjacency[p]!.push(c);
  // 0 = unvisited, 1 = on the current path, 2 = finished.
  const state = new Uint8Array(nodeCount);
  const path: number[] = [];
  const nextChild: number[] = [];
  for (let root = 0; root < nodeCount; root++) {
    if (state[root] !== 0) continue;
    path.push(root);
    nextChild.push(0);
    state[root] = 1;
    while (path.length > 0) {
      const top = path.length - 1;
      const node = path[top]!;
      const children = adjacency[node]!;
      const k = nextChild[top]!;
      if (k >= children.length) {
        state[node] = 2;
        path.pop();
        nextChild.pop();
        continue;
      }
      nextChild[top] = k + 1;
      const child = children[k]!;
      if (state[child] === 1) return [...path.slice(path.indexOf(child)), child];
      if (state[child] === 0) {
        state[child] = 1;
        path.push(child);
        nextChild.push(0);
      }
    }
  }
  return undefined;
}
