// Turns a DAG into series-parallel structured control (nested sequence / parallel), because ASL can
// only express fork-join through `Parallel` and a `Next` may never cross a branch. When the DAG is
// not series-parallel, some synchronisation edges must be added; the cut chosen at each level is the
// one that keeps the estimated makespan (critical path of the two halves) smallest.
import type { IrControl } from './Ir.js';

/** What scheduling produced: the control tree, the ordering edges it added, and its timing. */
export interface Schedule {
  readonly control: IrControl;
  /** `[from, to]` pairs the control tree orders although the DAG did not (sinks × sources of each cut). */
  readonly addedEdges: readonly (readonly [number, number])[];
  /** Makespan of the control tree with the given durations. */
  readonly makespan: number;
  /** Critical path of the DAG with the given durations. */
  readonly criticalPath: number;
}

/** Most cut candidates evaluated per level (evenly sampled): bounds the cost on large DAGs. */
const MAX_CANDIDATES = 48;
/** Above this many steps a level samples only LARGE_SET_CANDIDATES thresholds per family. */
const LARGE_SET = 128;
const LARGE_SET_CANDIDATES = 8;
/** How many levels of cuts are scored by their real makespan rather than the critical-path estimate. */
const LOOKAHEAD_DEPTH = 2;
/** Sets larger than this use the estimate only (keeps a 500-node DAG well under 100 ms). */
const LOOKAHEAD_MAX_NODES = 64;

/**
 * Series-parallel schedule of `n` nodes with `edges` (`[from, to]`, acyclic) and per-node durations
 * (default 1). Deterministic: branches are ordered by their smallest node index.
 */
export function scheduleDag(
  n: number,
  edges: readonly (readonly [number, number])[],
  durations?: readonly number[],
): Schedule {
  const dur = durations ?? new Array<number>(n).fill(1);
  const succ: number[][] = Array.from({ length: n }, () => []);
  const pred: number[][] = Array.from({ length: n }, () => []);
  for (const [a, b] of edges) {
    succ[a]!.push(b);
    pred[b]!.push(a);
  }
  const topo = topologicalOrder(n, succ, pred);
  const rank = new Int32Array(n);
  topo.forEach((v, i) => (rank[v] = i));
  if (n === 0) return { control: { type: 'sequence', items: [] }, addedEdges: [], makespan: 0, criticalPath: 0 };

  const mark = new Int32Array(n).fill(-1);
  const side = new Uint8Array(n);
  const sinkA = new Uint8Array(n);
  let stamp = 0;

  // Longest path through the induced subgraph `set` (in topological order).
  const finish = new Float64Array(n);
  const criticalPathOf = (set: readonly number[]): number => {
    const s = ++stamp;
    for (const v of set) mark[v] = s;
    let best = 0;
    for (const v of set) {
      let start = 0;
      for (const p of pred[v]!) if (mark[p] === s && finish[p]! > start) start = finish[p]!;
      finish[v] = start + dur[v]!;
      if (finish[v]! > best) best = finish[v]!;
    }
    return best;
  };

  const decompose = (set: readonly number[], depth = LOOKAHEAD_DEPTH): IrControl => {
    if (set.length === 1) return { type: 'step', step: set[0]! };
    const components = weakComponents(set);
    if (components.length > 1) {
      return { type: 'parallel', branches: components.map((c) => decompose(c, depth)) };
    }
    // One connected, non-trivial component: choose a downward-closed cut A | B.
    const s = ++stamp;
    for (const v of set) mark[v] = s;
    // Typed arrays indexed by node (fresh per level: the recursion below reuses the shared ones).
    const eft = new Float64Array(n);
    for (const v of set) {
      let start = 0;
      for (const p of pred[v]!) if (mark[p] === s && eft[p]! > start) start = eft[p]!;
      eft[v] = start + dur[v]!;
    }
    const tail = new Float64Array(n);
    for (let i = set.length - 1; i >= 0; i--) {
      const v = set[i]!;
      let rest = 0;
      for (const c of succ[v]!) if (mark[c] === s && tail[c]! > rest) rest = tail[c]!;
      tail[v] = rest + dur[v]!;
    }
    let cp = 0;
    for (const v of set) if (eft[v]! > cp) cp = eft[v]!;
    // Candidate cuts: "finished by t" (earliest) and "must start before t" (latest) families.
    // Scored without allocating: one pass computes both halves' critical paths from a side flag.
    const cuts: ((v: number) => boolean)[] = [];
    // Large sets sample fewer thresholds: cost is candidates × set size per level.
    const k = set.length > LARGE_SET ? LARGE_SET_CANDIDATES : MAX_CANDIDATES;
    for (const t of sample(distinct(set.map((v) => eft[v]!)).slice(0, -1), k)) cuts.push((v) => eft[v]! <= t);
    for (const t of sample(distinct(set.map((v) => cp - tail[v]!)).slice(1), k)) cuts.push((v) => cp - tail[v]! < t);
    const scored: { cut: (v: number) => boolean; score: number; added: number; imbalance: number }[] = [];
    // Sinks of A × sources of B not joined by an edge: the edges this cut adds (for the current side[]).
    const addedPairs = (members: readonly number[]): number => {
      let sinksA = 0;
      let sourcesB = 0;
      let direct = 0;
      for (const v of members) {
        if (side[v] === 1) {
          let sink = true;
          for (const c of succ[v]!) if (mark[c] === s && side[c] === 1) { sink = false; break; }
          sinkA[v] = sink ? 1 : 0;
          if (sink) sinksA++;
        }
      }
      for (const v of members) {
        if (side[v] !== 2) continue;
        let source = true;
        for (const p of pred[v]!) if (mark[p] === s && side[p] === 2) { source = false; break; }
        if (!source) continue;
        sourcesB++;
        for (const p of pred[v]!) if (mark[p] === s && side[p] === 1 && sinkA[p] === 1) direct++;
      }
      return sinksA * sourcesB - direct;
    };
    for (const inA of cuts) {
      let countA = 0;
      let cpA = 0;
      let cpB = 0;
      for (const v of set) {
        const sideV = inA(v) ? 1 : 2;
        side[v] = sideV;
        if (sideV === 1) countA++;
        let start = 0;
        for (const p of pred[v]!) if (mark[p] === s && side[p] === sideV && finish[p]! > start) start = finish[p]!;
        finish[v] = start + dur[v]!;
        if (sideV === 1) cpA = Math.max(cpA, finish[v]!);
        else cpB = Math.max(cpB, finish[v]!);
      }
      if (countA === 0 || countA === set.length) continue;
      scored.push({ cut: inA, score: cpA + cpB, added: addedPairs(set), imbalance: Math.abs(2 * countA - set.length) });
    }
    // Equal scores: fewer synchronisation edges (an exact series split adds none), then the more
    // balanced cut, which keeps the recursion shallow on long chains.
    scored.sort((x, y) => x.score - y.score || x.added - y.added || x.imbalance - y.imbalance);
    const split = (cut: (v: number) => boolean): { a: number[]; b: number[] } => {
      const a: number[] = [];
      const b: number[] = [];
      for (const v of set) (cut(v) ? a : b).push(v);
      return { a, b };
    };
    let best = scored[0] === undefined ? undefined : { ...split(scored[0].cut), score: scored[0].score };
    if (best !== undefined && depth > 0 && set.length <= LOOKAHEAD_MAX_NODES) {
      // Look ahead on small sets: the halves' real makespans. Candidates come in lower-bound order,
      // so the search stops as soon as no remaining cut can beat the best real makespan.
      let bestReal = Infinity;
      for (const c of scored) {
        if (c.score >= bestReal - 1e-9) break;
        const halves = split(c.cut);
        const real = makespanOf(decompose(halves.a, depth - 1), dur) + makespanOf(decompose(halves.b, depth - 1), dur);
        if (real < bestReal - 1e-9) {
          bestReal = real;
          best = { ...halves, score: c.score };
        }
      }
    }
    if (best === undefined) {
      // Unreachable for a connected set of ≥2 nodes with positive durations; fall back to one-by-one.
      return { type: 'sequence', items: set.map((step) => ({ type: 'step', step }) as IrControl) };
    }
    return sequenceOf([decompose(best.a, depth), decompose(best.b, depth)]);
  };

  // Weakly connected components of the induced subgraph, each in topological order.
  const weakComponents = (set: readonly number[]): number[][] => {
    const s = ++stamp;
    for (const v of set) mark[v] = s;
    const comp = new Map<number, number>();
    const out: number[][] = [];
    for (const root of set) {
      if (comp.has(root)) continue;
      const id = out.length;
      const members: number[] = [];
      const stack = [root];
      comp.set(root, id);
      while (stack.length > 0) {
        const v = stack.pop()!;
        members.push(v);
        for (const w of succ[v]!.concat(pred[v]!)) {
          if (mark[w] === s && !comp.has(w)) {
            comp.set(w, id);
            stack.push(w);
          }
        }
      }
      members.sort((x, y) => rank[x]! - rank[y]!);
      out.push(members);
    }
    out.sort((x, y) => Math.min(...x) - Math.min(...y));
    return out;
  };

  const control = decompose(topo);
  const criticalPath = criticalPathOf(topo);
  return { control, addedEdges: addedEdgesOf(control, n, succ, topo), makespan: makespanOf(control, dur), criticalPath };
}

/** Makespan of a control tree: a sequence adds up, a parallel takes its longest branch. */
export function makespanOf(control: IrControl, durations: readonly number[]): number {
  switch (control.type) {
    case 'step':
      return durations[control.step] ?? 1;
    case 'sequence':
      return control.items.reduce((sum, c) => sum + makespanOf(c, durations), 0);
    case 'parallel':
      return control.branches.reduce((max, c) => Math.max(max, makespanOf(c, durations)), 0);
  }
}

/** The naive lowering peer: one Parallel per longest-path level, levels in sequence. */
export function levelMakespan(
  n: number,
  edges: readonly (readonly [number, number])[],
  durations: readonly number[],
): number {
  const succ: number[][] = Array.from({ length: n }, () => []);
  const pred: number[][] = Array.from({ length: n }, () => []);
  for (const [a, b] of edges) {
    succ[a]!.push(b);
    pred[b]!.push(a);
  }
  const level = new Int32Array(n);
  const levels: number[] = [];
  for (const v of topologicalOrder(n, succ, pred)) {
    for (const p of pred[v]!) level[v] = Math.max(level[v]!, level[p]! + 1);
    levels[level[v]!] = Math.max(levels[level[v]!] ?? 0, durations[v]!);
  }
  return levels.reduce((a, b) => a + b, 0);
}

/** Steps of a control tree in execution (left-to-right) order (memoised: lowering asks per branch). */
export function controlSteps(control: IrControl): number[] {
  let out = CONTROL_STEPS.get(control);
  if (out !== undefined) return out;
  switch (control.type) {
    case 'step':
      out = [control.step];
      break;
    case 'sequence':
      out = control.items.flatMap(controlSteps);
      break;
    case 'parallel':
      out = control.branches.flatMap(controlSteps);
      break;
  }
  CONTROL_STEPS.set(control, out);
  return out;
}

const CONTROL_STEPS = new WeakMap<IrControl, number[]>();

function sequenceOf(items: readonly IrControl[]): IrControl {
  const flat: IrControl[] = [];
  for (const c of items) {
    if (c.type === 'sequence') flat.push(...c.items);
    else flat.push(c);
  }
  return { type: 'sequence', items: flat };
}

function distinct(values: readonly number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

function sample(values: readonly number[], k: number): readonly number[] {
  if (values.length <= k) return values;
  const out: number[] = [];
  for (let i = 0; i < k; i++) out.push(values[Math.floor((i * values.length) / k)]!);
  return out;
}

/** Kahn's algorithm, smallest index first among ready nodes (deterministic). */
function topologicalOrder(n: number, succ: readonly number[][], pred: readonly number[][]): number[] {
  const indeg = pred.map((p) => p.length);
  const ready: number[] = [];
  for (let v = 0; v < n; v++) if (indeg[v] === 0) ready.push(v);
  const out: number[] = [];
  while (ready.length > 0) {
    ready.sort((a, b) => a - b);
    const v = ready.shift()!;
    out.push(v);
    for (const c of succ[v]!) if (--indeg[c]! === 0) ready.push(c);
  }
  if (out.length !== n) throw new Error('scheduleDag: the graph has a cycle');
  return out;
}

/** Ordering pairs the control tree imposes that the DAG's transitive closure does not contain. */
function addedEdgesOf(control: IrControl, n: number, succ: readonly number[][], topo: readonly number[]): [number, number][] {
  const words = Math.ceil(n / 32);
  const reach = new Uint32Array(n * words);
  for (let i = topo.length - 1; i >= 0; i--) {
    const v = topo[i]!;
    for (const c of succ[v]!) {
      reach[v * words + (c >>> 5)]! |= 1 << (c & 31);
      for (let w = 0; w < words; w++) reach[v * words + w]! |= reach[c * words + w]!;
    }
  }
  const reaches = (a: number, b: number) => (reach[a * words + (b >>> 5)]! & (1 << (b & 31))) !== 0;
  const added: [number, number][] = [];
  const visit = (c: IrControl): void => {
    if (c.type === 'parallel') c.branches.forEach(visit);
    if (c.type !== 'sequence') return;
    c.items.forEach(visit);
    for (let i = 0; i + 1 < c.items.length; i++) {
      for (const a of exitsOf(c.items[i]!)) {
        for (const b of entriesOf(c.items[i + 1]!)) if (!reaches(a, b)) added.push([a, b]);
      }
    }
  };
  visit(control);
  return added.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
}

function exitsOf(c: IrControl): number[] {
  if (c.type === 'step') return [c.step];
  if (c.type === 'parallel') return c.branches.flatMap(exitsOf);
  return c.items.length === 0 ? [] : exitsOf(c.items[c.items.length - 1]!);
}

function entriesOf(c: IrControl): number[] {
  if (c.type === 'step') return [c.step];
  if (c.type === 'parallel') return c.branches.flatMap(entriesOf);
  return c.items.length === 0 ? [] : entriesOf(c.items[0]!);
}
