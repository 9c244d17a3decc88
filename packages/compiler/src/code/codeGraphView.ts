// The step graph of a workflow written in code, as `stepforge graph` prints every format's.
import type { GraphView, GraphViewNode } from '../graph/GraphView.js';
import type { IrDocument } from '../ir/Ir.js';

/** Nodes in declaration order (kind `node`), edges between them; the graph's ends are left out. */
export function codeGraphView(ir: IrDocument): GraphView {
  const nodes: GraphViewNode[] = [];
  const edges: [number, number][] = [];
  for (const step of ir.workflow.steps) {
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
