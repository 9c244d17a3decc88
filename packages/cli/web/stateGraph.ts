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
      const inner = st.Branches ?? ((st.ItemProcessor ?? st.Iterator) ? [st.ItemProcessor ?? st.Iterator!] : undefined);
      if (inner) {
        const gid = `group:${sid}`;
        groups.push({ id: gid, state: sid, type: st.Type === 'Parallel' ? 'Parallel' : 'Map', ...(group !== undefined ? { group } : {}) });
        nodes.push({ id: sid, name, type: st.Type, group: gid });
        const ends: string[] = [];
        inner.forEach((b, i) => {
          const p = `${sid}/${i}/`;
          scope(p, b.States, gid);
          edges.push({ from: sid, to: `${p}${b.StartAt}`, kind: 'branch' });
          for (const [n, s2] of Object.entries(b.States))
            if (s2.End || s2.Type === 'Succeed') ends.push(...(exits.get(`${p}${n}`) ?? [`${p}${n}`]));
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
  // A Fail or Succeed state that many states lead to (every step of a compiled workflow catches
  // into one Fail state) is drawn beside each state that leads there: one shared node would pull
  // edges across the whole graph, which reads badly and costs the layout a dummy node per rank crossed.
  const kept: GraphEdge[] = [];
  const typeOf = new Map(nodes.map((n) => [n.id, n]));
  const aliased = new Set<string>();
  const incoming = new Map<string, number>();
  for (const e of edges) incoming.set(e.to, (incoming.get(e.to) ?? 0) + 1);
  for (const e of edges) {
    const target = typeOf.get(e.to)!;
    if ((target.type === 'Fail' || target.type === 'Succeed') && incoming.get(e.to)! > 1) {
      const id = `${e.to}#${e.from}`;
      // Beside the state: for a Parallel or Map (whose node is inside its own box), beside the box.
      const box = groups.find((x) => x.state === e.from);
      const group = box ? box.group : typeOf.get(e.from)!.group;
      nodes.push({ id, name: target.name, type: target.type, ...(group !== undefined ? { group } : {}) });
      kept.push({ from: e.from, to: id, kind: e.kind });
      aliased.add(e.to);
    } else kept.push(e);
  }
  const reached = new Set(kept.map((e) => e.to));
  const shown = nodes.filter((n) => !aliased.has(n.id) || reached.has(n.id));
  const seen = new Set<string>();
  return {
    nodes: shown,
    groups,
    edges: kept.filter((e) => (seen.has(`${e.from}>${e.to}`) ? false : (seen.add(`${e.from}>${e.to}`), true))),
  };
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

const PAD = 10;
/** The most members of one scope dagre lays out at once. */
const CHUNK = 24;

/** Members in the order the edges run (a breadth-first walk from those nothing leads to), then any left. */
function flowOrder(ids: readonly string[], es: readonly { from: string; to: string }[]): string[] {
  const into = new Map<string, number>();
  const out = new Map<string, string[]>();
  for (const e of es) {
    into.set(e.to, (into.get(e.to) ?? 0) + 1);
    out.set(e.from, [...(out.get(e.from) ?? []), e.to]);
  }
  const seen = new Set<string>();
  const order: string[] = [];
  const queue = ids.filter((id) => !into.has(id));
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i]!;
    if (seen.has(id)) continue;
    seen.add(id);
    order.push(id);
    for (const t of out.get(id) ?? []) if (!seen.has(t)) queue.push(t);
  }
  for (const id of ids) if (!seen.has(id)) order.push(id);
  return order;
}

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * Lays the graph out top to bottom with dagre, one scope at a time: each Parallel or Map group is
 * laid out on its own, innermost first, and then stands as one box in its parent's layout (as the
 * console draws them). Each dagre run sees one scope's states only, which keeps it fast: dagre's
 * cost grows faster than the states it is given. x/y are centres.
 */
export function layoutGraph(g: StateGraph): Layout {
  const groupOf = new Map<string, string | undefined>();
  for (const grp of g.groups) groupOf.set(grp.id, grp.group);
  for (const n of g.nodes) groupOf.set(n.id, n.group);
  /** The member of `scope` that holds `id` (itself, or the group box it is inside), if any. */
  const inScope = (id: string, scope: string | undefined): string | undefined => {
    let cur: string | undefined = id;
    while (cur !== undefined) {
      if (groupOf.get(cur) === scope) return cur;
      cur = groupOf.get(cur);
    }
    return undefined;
  };
  const members = new Map<string | undefined, string[]>();
  for (const id of groupOf.keys()) {
    const sc = groupOf.get(id);
    members.set(sc, [...(members.get(sc) ?? []), id]);
  }
  const isGroup = new Set(g.groups.map((x) => x.id));
  const nodeWidth = new Map(g.nodes.map((n) => [n.id, Math.min(260, Math.max(90, n.name.length * 7.2 + 28))]));
  // Relative layouts per scope: member boxes, and edge points.
  const local = new Map<
    string | undefined,
    { width: number; height: number; boxes: Map<string, Box>; edges: { edge: GraphEdge; points: { x: number; y: number }[] }[] }
  >();
  const edgesByScope = new Map<string | undefined, { edge: GraphEdge; from: string; to: string }[]>();
  for (const e of g.edges) {
    // The innermost scope holding both ends, seen from which they are two different members.
    let sc = groupOf.get(e.from);
    for (;;) {
      const a = inScope(e.from, sc);
      const b = inScope(e.to, sc);
      if (a !== undefined && b !== undefined) {
        if (a !== b) edgesByScope.set(sc, [...(edgesByScope.get(sc) ?? []), { edge: e, from: a, to: b }]);
        break;
      }
      if (sc === undefined) break;
      sc = groupOf.get(sc);
    }
  }
  /** Lays out some members of a scope with dagre: their boxes and the edges among them, relative to (0, 0). */
  const dagreLayout = (ids: readonly string[], es: readonly { edge: GraphEdge; from: string; to: string }[], margin: number) => {
    const d = new dagre.graphlib.Graph({ multigraph: false });
    d.setGraph({ rankdir: 'TB', nodesep: 24, ranksep: 36, marginx: margin, marginy: margin });
    d.setDefaultEdgeLabel(() => ({}));
    for (const id of ids) d.setNode(id, isGroup.has(id) ? layoutScope(id) : { width: nodeWidth.get(id)!, height: NODE_HEIGHT });
    for (const e of es) d.setEdge(e.from, e.to);
    dagre.layout(d);
    const boxes = new Map<string, Box>();
    for (const id of ids) {
      const v = d.node(id);
      boxes.set(id, { x: v.x, y: v.y, width: v.width, height: v.height });
    }
    const gr = d.graph();
    return {
      width: gr.width ?? 0,
      height: gr.height ?? 0,
      boxes,
      edges: es.map((e) => ({ edge: e.edge, points: (d.edge(e.from, e.to)?.points ?? []) as { x: number; y: number }[] })),
    };
  };
  const layoutScope = (sc: string | undefined): { width: number; height: number } => {
    const ids = members.get(sc) ?? [];
    const es = edgesByScope.get(sc) ?? [];
    const margin = sc === undefined ? 16 : PAD;
    if (ids.length <= CHUNK) {
      const out = dagreLayout(ids, es, margin);
      local.set(sc, out);
      return { width: out.width, height: out.height };
    }
    // A long scope (a machine of hundreds of states in sequence): dagre's cost grows with the square
    // of the ranks, so the scope is cut, in the order its edges give, into chunks that dagre lays
    // out one by one and that are stacked; the few edges between chunks are drawn straight.
    const order = flowOrder(ids, es);
    const chunkOf = new Map<string, number>();
    order.forEach((id, i) => chunkOf.set(id, Math.floor(i / CHUNK)));
    const chunks: ReturnType<typeof dagreLayout>[] = [];
    for (let c = 0; c * CHUNK < order.length; c++) {
      const part = order.slice(c * CHUNK, (c + 1) * CHUNK);
      chunks.push(
        dagreLayout(
          part,
          es.filter((e) => chunkOf.get(e.from) === c && chunkOf.get(e.to) === c),
          margin,
        ),
      );
    }
    const width = Math.max(...chunks.map((c) => c.width));
    const boxes = new Map<string, Box>();
    const edgesOut: { edge: GraphEdge; points: { x: number; y: number }[] }[] = [];
    let y = 0;
    for (const c of chunks) {
      const dx = (width - c.width) / 2;
      for (const [id, b] of c.boxes) boxes.set(id, { ...b, x: b.x + dx, y: b.y + y });
      for (const e of c.edges) edgesOut.push({ edge: e.edge, points: e.points.map((p) => ({ x: p.x + dx, y: p.y + y })) });
      y += c.height;
    }
    for (const e of es) {
      if (chunkOf.get(e.from) === chunkOf.get(e.to)) continue;
      const a = boxes.get(e.from)!;
      const b = boxes.get(e.to)!;
      edgesOut.push({
        edge: e.edge,
        points: [
          { x: a.x, y: a.y + a.height / 2 },
          { x: b.x, y: b.y - b.height / 2 },
        ],
      });
    }
    local.set(sc, { width, height: y, boxes, edges: edgesOut });
    return { width, height: y };
  };
  const size = layoutScope(undefined);
  // Absolute positions: each scope's layout moved to where its box landed in its parent's.
  const nodes = new Map<string, Box>();
  const groups = new Map<string, Box>();
  const edges: { edge: GraphEdge; points: { x: number; y: number }[] }[] = [];
  const place = (sc: string | undefined, dx: number, dy: number): void => {
    const l = local.get(sc)!;
    for (const [id, b] of l.boxes) {
      const abs = { x: b.x + dx, y: b.y + dy, width: b.width, height: b.height };
      if (isGroup.has(id)) {
        groups.set(id, abs);
        place(id, abs.x - abs.width / 2, abs.y - abs.height / 2);
      } else nodes.set(id, abs);
    }
    for (const e of l.edges) edges.push({ edge: e.edge, points: e.points.map((p) => ({ x: p.x + dx, y: p.y + dy })) });
  };
  place(undefined, 0, 0);
  return { width: size.width, height: size.height, nodes, groups, edges };
}
