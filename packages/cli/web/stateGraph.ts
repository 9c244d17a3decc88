import dagre from '@dagrejs/dagre';

/** A state of the machine as drawn: `id` is its path (unique), `name` what the history calls it. */
export interface GraphNode {
  readonly id: string;
  readonly name: string;
  readonly type: string;
  /** The group (Parallel or Map) it is drawn inside. */
  readonly group?: string;
}
/** A Parallel or Map drawn as a box around its states; `state` is the node standing for the state itself. */
export interface GraphGroup {
  readonly id: string;
  readonly state: string;
  readonly type: 'Parallel' | 'Map';
  readonly group?: string;
}
export interface GraphEdge {
  readonly from: string;
  readonly to: string;
  readonly kind: 'next' | 'catch' | 'choice' | 'branch';
}
export interface StateGraph {
  readonly nodes: readonly GraphNode[];
  readonly groups: readonly GraphGroup[];
  readonly edges: readonly GraphEdge[];
}

interface AslState {
  Type: string;
  Next?: string;
  End?: boolean;
  Default?: string;
  Choices?: { Next?: string }[];
  Catch?: { Next?: string }[];
  Branches?: { StartAt: string; States: Record<string, AslState> }[];
  ItemProcessor?: { StartAt: string; States: Record<string, AslState> };
  Iterator?: { StartAt: string; States: Record<string, AslState> };
}

/**
 * The state machine as a graph: every state a node, Parallel and Map states groups around their
 * branches (with the state itself as the group's first node), transitions as edges. A branch's last
 * states lead to what follows the Parallel or Map, as the console draws it.
 */
export function stateGraph(definition: { StartAt: string; States: Record<string, AslState> }): StateGraph {
  const nodes: GraphNode[] = [];
  const groups: GraphGroup[] = [];
  const edges: GraphEdge[] = [];
  /** Per state id, the nodes an edge leaving it starts from (a container's: its branches' last states). */
  const exits = new Map<string, string[]>();

  const scope = (prefix: string, states: Record<string, AslState>, group: string | undefined): void => {
    const id = (name: string) => `${prefix}${name}`;
    for (const [name, st] of Object.entries(states)) {
      const sid = id(name);
      const inner = st.Branches ?? (st.ItemProcessor ?? st.Iterator ? [st.ItemProcessor ?? st.Iterator!] : undefined);
      if (inner) {
        const gid = `group:${sid}`;
        groups.push({ id: gid, state: sid, type: st.Type === 'Parallel' ? 'Parallel' : 'Map', ...(group !== undefined ? { group } : {}) });
        nodes.push({ id: sid, name, type: st.Type, group: gid });
        const ends: string[] = [];
        inner.forEach((b, i) => {
          const p = `${sid}/${i}/`;
          scope(p, b.States, gid);
          edges.push({ from: sid, to: `${p}${b.StartAt}`, kind: 'branch' });
          for (const [n, s2] of Object.entries(b.States)) if (s2.End || s2.Type === 'Succeed') ends.push(...(exits.get(`${p}${n}`) ?? [`${p}${n}`]));
        });
        exits.set(sid, ends.length ? ends : [sid]);
      } else {
        nodes.push({ id: sid, name, type: st.Type, ...(group !== undefined ? { group } : {}) });
        exits.set(sid, [sid]);
      }
    }
    for (const [name, st] of Object.entries(states)) {
      const sid = id(name);
      const link = (to: string | undefined, kind: GraphEdge['kind'], from: readonly string[]) => {
        if (to !== undefined && to in states) for (const f of from) edges.push({ from: f, to: id(to), kind });
      };
      link(st.Next, 'next', exits.get(sid)!);
      for (const c of st.Choices ?? []) link(c.Next, 'choice', [sid]);
      link(st.Default, 'choice', [sid]);
      for (const c of st.Catch ?? []) link(c.Next, 'catch', [sid]);
    }
  };
  scope('', definition.States, undefined);
  const seen = new Set<string>();
  return { nodes, groups, edges: edges.filter((e) => (seen.has(`${e.from}>${e.to}`) ? false : (seen.add(`${e.from}>${e.to}`), true))) };
}

/** Where each node and group is drawn. */
export interface Layout {
  readonly width: number;
  readonly height: number;
  readonly nodes: ReadonlyMap<string, { x: number; y: number; width: number; height: number }>;
  readonly groups: ReadonlyMap<string, { x: number; y: number; width: number; height: number }>;
  readonly edges: readonly { edge: GraphEdge; points: readonly { x: number; y: number }[] }[];
}

export const NODE_HEIGHT = 34;

/** Lays the graph out top to bottom with dagre (groups as compound nodes); x/y are centres. */
export function layoutGraph(g: StateGraph): Layout {
  const d = new dagre.graphlib.Graph({ compound: true, multigraph: false });
  d.setGraph({ rankdir: 'TB', nodesep: 24, ranksep: 36, marginx: 16, marginy: 16 });
  d.setDefaultEdgeLabel(() => ({}));
  for (const grp of g.groups) d.setNode(grp.id, { paddingTop: 8, paddingBottom: 8, paddingLeft: 8, paddingRight: 8 });
  for (const n of g.nodes) d.setNode(n.id, { width: Math.min(260, Math.max(90, n.name.length * 7.2 + 28)), height: NODE_HEIGHT });
  for (const grp of g.groups) if (grp.group) d.setParent(grp.id, grp.group);
  for (const n of g.nodes) if (n.group) d.setParent(n.id, n.group);
  for (const e of g.edges) d.setEdge(e.from, e.to);
  dagre.layout(d);
  const nodes = new Map<string, { x: number; y: number; width: number; height: number }>();
  for (const n of g.nodes) {
    const v = d.node(n.id);
    nodes.set(n.id, { x: v.x, y: v.y, width: v.width, height: v.height });
  }
  const groups = new Map<string, { x: number; y: number; width: number; height: number }>();
  for (const grp of g.groups) {
    const v = d.node(grp.id);
    groups.set(grp.id, { x: v.x, y: v.y, width: v.width, height: v.height });
  }
  const edges = g.edges.map((edge) => ({ edge, points: (d.edge(edge.from, edge.to)?.points ?? []) as { x: number; y: number }[] }));
  const gr = d.graph();
  return { width: gr.width ?? 0, height: gr.height ?? 0, nodes, groups, edges };
}
