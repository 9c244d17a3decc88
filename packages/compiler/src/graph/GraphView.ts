/** One node of a GraphView: the step's handle, its kind, its tool grants and (DSL only) its enclosing step. */
export interface GraphViewNode {
  readonly handle: string;
  readonly kind: string;
  readonly tools: readonly string[];
  /** DSL: the name of the step's output (`output:`, GraphN's canvas node id; the step name by default). */
  readonly output?: string;
  /** The handle of the step this one is nested in (DSL `for_each`, `parallel_analyzer`, …); absent at top level. */
  readonly parent?: string;
}

/**
 * The front-end-neutral picture of a workflow: nodes in first-appearance order and edges as
 * `[parentIndex, childIndex]` pairs sorted by (parent, child). `stepforge graph --json` prints exactly this.
 */
export interface GraphView {
  readonly nodes: readonly GraphViewNode[];
  readonly edges: readonly (readonly [number, number])[];
}

/** The `--json` shape: plain data with keys in the documented order (`output` and `parent` only when present). */
export function graphViewToJson(g: GraphView): { nodes: GraphViewNode[]; edges: [number, number][] } {
  return {
    nodes: g.nodes.map((n) => {
      const node: { handle: string; kind: string; tools: string[]; output?: string; parent?: string } = {
        handle: n.handle,
        kind: n.kind,
        tools: [...n.tools],
      };
      if (n.output !== undefined) node.output = n.output;
      if (n.parent !== undefined) node.parent = n.parent;
      return node;
    }),
    edges: g.edges.map(([p, c]) => [p, c] as [number, number]),
  };
}

function nodeLabel(n: GraphViewNode, newline: string): string {
  const tools = n.tools.length > 0 ? `${newline}${n.tools.map((t) => '@' + t).join(' ')}` : '';
  return `${n.handle}${newline}(${n.kind})${tools}`;
}

/** Groups node indices by the index of their parent handle (nested DSL steps); unknown parents are ignored. */
function childrenByParent(g: GraphView): Map<number, number[]> {
  const indexOf = new Map<string, number>();
  g.nodes.forEach((n, i) => {
    if (!indexOf.has(n.handle)) indexOf.set(n.handle, i);
  });
  const groups = new Map<number, number[]>();
  g.nodes.forEach((n, i) => {
    if (n.parent === undefined) return;
    const p = indexOf.get(n.parent);
    if (p === undefined) return;
    const list = groups.get(p) ?? [];
    list.push(i);
    groups.set(p, list);
  });
  return groups;
}

/** The kinds whose body runs again: a link goes back from each of the body's last steps to the loop. */
const LOOP_KINDS: ReadonlySet<string> = new Set(['for_each', 'while']);

/** A dashed link between a step and the body it holds, which no data edge draws. */
interface BodyLink {
  readonly from: number;
  readonly to: number;
  readonly label: string;
}

/**
 * The links between each step and its body: from the step to each first step of its body (those no
 * sibling precedes), labelled by what the step does with it (`each` item, `do` a round, `then`/`else`
 * branch); for a loop, also back from each last step of its body (those no sibling follows), `repeat`.
 */
function bodyLinks(g: GraphView, groups: ReadonlyMap<number, readonly number[]>): BodyLink[] {
  const links: BodyLink[] = [];
  for (const [parent, children] of groups) {
    const inBody = new Set(children);
    const hasPred = new Set<number>();
    const hasSucc = new Set<number>();
    for (const [p, c] of g.edges) {
      if (inBody.has(p) && inBody.has(c)) {
        hasSucc.add(p);
        hasPred.add(c);
      }
    }
    const kind = g.nodes[parent]!.kind;
    for (const child of children) {
      if (hasPred.has(child)) continue;
      const handle = g.nodes[child]!.handle;
      const label = handle.endsWith('.then') ? 'then' : handle.endsWith('.else') ? 'else' : kind === 'for_each' ? 'each' : 'do';
      links.push({ from: parent, to: child, label });
    }
    if (!LOOP_KINDS.has(kind)) continue;
    for (const child of children) if (!hasSucc.has(child)) links.push({ from: child, to: parent, label: 'repeat' });
  }
  return links;
}

// Mermaid labels live inside "…"; a double quote must become an entity or the diagram breaks.
function mermaidText(s: string): string {
  return s.replace(/"/g, '#quot;');
}

/** Renders a GraphView as a Mermaid `flowchart` (nested steps become subgraphs, linked to their parent: see bodyLinks). */
export function renderMermaid(g: GraphView): string {
  const lines = ['flowchart TD'];
  const groups = childrenByParent(g);
  const nested = new Set<number>([...groups.values()].flat());
  const nodeLine = (i: number, indent: string) => {
    const n = g.nodes[i]!;
    const label = mermaidText(nodeLabel(n, '<br/>'));
    const shape = n.kind === 'pure' ? [`{{"`, `"}}`] : n.kind === 'model' ? [`["`, `"]`] : [`("`, `")`];
    lines.push(`${indent}n${i}${shape[0]}${label}${shape[1]}`);
  };
  g.nodes.forEach((_, i) => {
    if (!nested.has(i)) nodeLine(i, '  ');
  });
  // Emit subgraphs outermost first so a nested parent's subgraph can sit inside its own parent's.
  const emitGroup = (parent: number, indent: string) => {
    lines.push(`${indent}subgraph s${parent}["${mermaidText(g.nodes[parent]!.handle)}"]`);
    for (const child of groups.get(parent)!) {
      nodeLine(child, indent + '  ');
      if (groups.has(child)) emitGroup(child, indent + '  ');
    }
    lines.push(`${indent}end`);
  };
  for (const parent of groups.keys()) {
    if (!nested.has(parent)) emitGroup(parent, '  ');
  }
  for (const l of bodyLinks(g, groups)) lines.push(`  n${l.from} -.->|${l.label}| n${l.to}`);
  for (const [p, c] of g.edges) lines.push(`  n${p} --> n${c}`);
  return lines.join('\n') + '\n';
}

// DOT quoted strings: escape backslashes and quotes; `\n` is DOT's own centred line break.
function dotText(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

/** Renders a GraphView as a Graphviz `digraph` (nested steps become clusters, linked to their parent: see bodyLinks). */
export function renderDot(g: GraphView): string {
  const lines = ['digraph workflow {', '  rankdir=TB;', '  node [fontname="Helvetica"];'];
  const groups = childrenByParent(g);
  const nested = new Set<number>([...groups.values()].flat());
  const nodeLine = (i: number, indent: string) => {
    const n = g.nodes[i]!;
    const label = nodeLabel({ ...n, handle: dotText(n.handle) }, '\\n');
    const shape = n.kind === 'pure' ? 'hexagon' : n.kind === 'model' ? 'box' : 'ellipse';
    lines.push(`${indent}n${i} [label="${label}", shape=${shape}];`);
  };
  g.nodes.forEach((_, i) => {
    if (!nested.has(i)) nodeLine(i, '  ');
  });
  const emitGroup = (parent: number, indent: string) => {
    lines.push(`${indent}subgraph cluster_${parent} {`);
    lines.push(`${indent}  label="${dotText(g.nodes[parent]!.handle)}";`);
    for (const child of groups.get(parent)!) {
      nodeLine(child, indent + '  ');
      if (groups.has(child)) emitGroup(child, indent + '  ');
    }
    lines.push(`${indent}}`);
  };
  for (const parent of groups.keys()) {
    if (!nested.has(parent)) emitGroup(parent, '  ');
  }
  for (const l of bodyLinks(g, groups)) lines.push(`  n${l.from} -> n${l.to} [style=dashed, label="${l.label}"];`);
  for (const [p, c] of g.edges) lines.push(`  n${p} -> n${c};`);
  lines.push('}');
  return lines.join('\n') + '\n';
}
