// The step graph of a workflow written in code, as `stepforge graph` prints every format's.
import type { GraphView, GraphViewNode } from '../graph/GraphView.js';
import type { IrDocument } from '../ir/Ir.js';

/**
 * Nodes in declaration order, edges between them; the graph's ends are left out. A Kortyx node is
 * kind `node`; an agent SDK step is `agent`, a parallel group `parallel` (its branches name it as
 * their parent), a state graph node `node` or `agent` (an agentNode). A router's edges are known
 * only when it runs, so they are not drawn.
 */
export function codeGraphView(ir: IrDocument): GraphView {
  const nodes: GraphViewNode[] = [];
  const edges: [number, number][] = [];
  for (const step of ir.workflow.steps) {
    const sdk = step.composite?.sdk;
    if (sdk) {
      const add = (n: GraphViewNode) => nodes.push(n) - 1;
      if (sdk.shape === 'stateGraph') {
        const base = nodes.length;
        const index = new Map((sdk.nodes ?? []).map((n, i) => [n.name, base + i]));
        for (const n of sdk.nodes ?? []) add({ handle: n.name, kind: n.agent ? 'agent' : 'node', tools: [...(n.agent?.tools ?? [])] });
        for (const n of sdk.nodes ?? []) {
          const to = n.next && 'to' in n.next ? index.get(n.next.to) : undefined;
          if (to !== undefined) edges.push([index.get(n.name)!, to]);
        }
        continue;
      }
      const branches = (parent: string, bs: readonly { name: string; agent: { tools: readonly string[] } }[]) =>
        bs.map((b) => add({ handle: b.name, kind: 'agent', tools: [...b.agent.tools], parent }));
      if (sdk.shape === 'parallel') {
        branches(step.id, sdk.branches ?? []);
        continue;
      }
      let prev: number | undefined;
      for (const item of sdk.items ?? []) {
        const at =
          item.kind === 'step'
            ? add({ handle: item.step.name, kind: 'agent', tools: [...item.step.agent.tools] })
            : add({ handle: item.name, kind: 'parallel', tools: [] });
        if (item.kind === 'parallel') branches(item.name, item.branches);
        if (prev !== undefined) edges.push([prev, at]);
        prev = at;
      }
      continue;
    }
    const g = step.composite?.graph;
    if (!g) continue;
    const base = nodes.length;
    const index = new Map(g.nodes.map((n, i) => [n.name, base + i]));
    for (const n of g.nodes) nodes.push({ handle: n.name, kind: n.kind ?? 'node', tools: [...(n.tools ?? [])] });
    for (const e of g.edges) {
      const from = index.get(e.from);
      const to = index.get(e.to);
      if (from !== undefined && to !== undefined) edges.push([from, to]);
    }
  }
  const seen = new Set<string>();
  const unique = edges.filter(([a, b]) => !seen.has(`${a},${b}`) && seen.add(`${a},${b}`) !== undefined);
  unique.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  return { nodes, edges: unique };
}
