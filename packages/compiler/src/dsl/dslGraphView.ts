import type { GraphView, GraphViewNode } from '../graph/GraphView.js';
import type { DslDocument, DslScope, DslStep } from './DslDocument.js';

/**
 * The GraphView of a DSL document: every step (nested ones after their parent, with `parent` set) in
 * source order, handle = step name, kind = its `call:`, output = its output's name (the canvas node id),
 * and the dependency edges of every scope as `[from, to]` node indices.
 * Tools: an agent's declared `tools:` list; `server/tool` for an mcp_tool step.
 */
export function dslGraphView(doc: DslDocument): GraphView {
  const nodes: GraphViewNode[] = [];
  const edges: [number, number][] = [];
  const visit = (scope: DslScope): void => {
    const index: number[] = [];
    for (const s of scope.steps) {
      index.push(nodes.length);
      // Assigned rather than spread in: one object per step, `parent` last and only when present.
      nodes.push(
        s.parent === undefined
          ? { handle: s.name, kind: s.kind, tools: toolsOf(doc, s), output: s.output }
          : { handle: s.name, kind: s.kind, tools: toolsOf(doc, s), output: s.output, parent: s.parent },
      );
      if (s.kind === 'for_each' || s.kind === 'while') visit(s.do);
      if (s.kind === 'conditional' && s.branches) visit(s.branches);
    }
    for (const [a, b] of scope.edges) edges.push([index[a]!, index[b]!]);
  };
  visit(doc.workflow);
  edges.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  return { nodes, edges };
}

function toolsOf(doc: DslDocument, s: DslStep): string[] {
  if (s.kind === 'mcp_tool') return [`${s.server}/${s.tool}`];
  if (s.kind === 'agent') {
    const tools = doc.agents[s.agent]?.config.tools;
    if (Array.isArray(tools)) return [...new Set(tools.filter((t): t is string => typeof t === 'string'))];
  }
  return [];
}
