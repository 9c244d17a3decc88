// Turns a DAG into series-parallel structured control (nested sequence / parallel), because ASL can
// only express fork-join through `Parallel` and a `Next` may never cross a branch. When the DAG is
// not series-parallel, some synchronisation edges must be added; the cut chosen at each level is the
// one that keeps the estimated makespan (critical path of the two halves) smallest.
import type { IrControl } from './Ir.js';
import { topologicalOrderOfAdjacency } from '../graph/topologicalOrder.js';

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

/** Most cut candidates per family on sets small enough to look ahead (evenly sampled): each costs a lookahead. */
const MAX_CANDIDATES = 48;
/** How many levels of cuts are scored by their real makespan rather than the critical-path estimate. */
const LOOKAHEAD_DEPTH = 2;
/** Without lookahead, a cut should leave at least 1/BALANCE_PARTS of the set on each side when that costs nothing. */
const BALANCE_PARTS = 16;
/** Sets larger than this use the estimate only (keeps a 500-node DAG well under 100 ms). */
const LOOKAHEAD_MAX_NODES = 64;
/**
 * Graphs larger than this skip the lookahead everywhere: on a 1,000-step workflow the lookahead on
 * its many small sets cost most of the scheduling time and, measured on the bench graphs, changed
 * neither the makespan nor the edges added. Hand-written workflows (tens of steps) keep it.
 */
const LOOKAHEAD_MAX_GRAPH = 200;

/**
 * Series-parallel schedule of `n` nodes with `edges` (`[from, to]`, acyclic) and per-node durations
 * (default 1). Deterministic: branches are ordered by their smallest node index.
 */
export function scheduleDag(n: number, edges: readonly (readonly [number, number])[], durations?: readonly number[]): Schedule {
  const dur = durations ?? new Array<number>(n).fill(1);
  const succ: number[][] = Array.from({ length: n }, () => []);
  const pred: number[][] = Array.from({ length: n }, () => []);
  for (const [a, b] of edges) {
    succ[a]!.push(b);
    pred[b]!.push(a);
  }
  const topo = acyclicOrder(succ, pred);
  if (n === 0) return { control: { type: 'sequence', items: [] }, addedEdges: [], makespan: 0, criticalPath: 0 };
  const scheduler = new DagScheduler(n, dur, succ, pred);
  const control = scheduler.decompose(topo, LOOKAHEAD_DEPTH);
  const criticalPath = scheduler.criticalPathOf(topo);
  return { control, addedEdges: addedEdgesOf(control, n, succ, topo), makespan: makespanOf(control, dur), criticalPath };
}

/**
 * One scheduling: the DAG as flat adjacency and the scratch arrays every level shares, with the
 * work as methods. They were closures made afresh by each call; V8 keeps a function's optimised code
 * only while a function object holding it lives, so the first mark-compact after a compile took the
 * optimised code of every closure of the compiles before it, and the next compile ran the sweeps
 * unoptimised until V8 had compiled them again (one compile of the 1,000-step document in about
 * twenty took 150-250 ms instead of 35). Methods live as long as the module.
 */
class DagScheduler {
  // The adjacency as offsets into one array per direction: every sweep walks it for each member of
  // each set it cuts, and indexed loops over typed arrays allocate no iterators.
  readonly succAt: Int32Array;
  readonly predAt: Int32Array;
  readonly succTo: Int32Array;
  readonly predTo: Int32Array;
  readonly mark: Int32Array;
  readonly side: Uint8Array;
  readonly succInA: Int32Array;
  readonly predInB: Int32Array;
  readonly pos: Int32Array;
  readonly seen: Int32Array;
  readonly comp: Int32Array;
  /** weakComponents' search stack: it never recurses, so one serves every level. */
  readonly pending: Int32Array;
  /**
   * Sweep scratch, indexed by position in the set being cut: a sweep ends before any recursion, so
   * one node-sized copy serves every level (small typed arrays per sweep cost more than the sweep).
   */
  readonly rankOf: Int32Array;
  readonly bucket: Int32Array;
  /** Counts by key value (sortByKey's counting path: a span below twice the set's size). */
  readonly byValue: Int32Array;
  readonly order: Int32Array;
  readonly tailFrom: Float64Array;
  /** The sorted distinct keys of the set being swept. */
  readonly keys: Float64Array;
  readonly finish: Float64Array;
  /**
   * Earliest finish, in-set predecessors, tail and latest start of the set being cut, by position.
   * Without lookahead a level is done with them before it recurses, so one node-sized copy of each
   * serves every level of a large graph; a small graph's lookahead recurses between its candidate
   * cuts, so each level there gets its own.
   */
  readonly shareLevels: boolean;
  readonly eftAll: Float64Array;
  readonly inDegreeAll: Float64Array;
  readonly tailAll: Float64Array;
  readonly lateAll: Float64Array;
  /** Without lookahead every set is decomposed exactly once, so hashing and keeping it buys nothing. */
  readonly memoize: boolean;
  /**
   * The lookahead decomposes the same halves again and again (at each depth, then for real): the
   * result is a pure function of (set, depth), so it is computed once. Keyed by a hash of the
   * members (a string key per set cost more than the lookups saved), the members compared on a hit.
   */
  readonly memo: Map<number, MemoEntry[]>;
  stamp: number;

  constructor(
    readonly n: number,
    readonly dur: readonly number[],
    succ: readonly number[][],
    pred: readonly number[][],
  ) {
    this.succAt = offsets(succ);
    this.predAt = offsets(pred);
    this.succTo = targets(succ, this.succAt);
    this.predTo = targets(pred, this.predAt);
    this.mark = new Int32Array(n).fill(-1);
    this.side = new Uint8Array(n);
    this.succInA = new Int32Array(n);
    this.predInB = new Int32Array(n);
    this.pos = new Int32Array(n);
    this.seen = new Int32Array(n).fill(-1);
    this.comp = new Int32Array(n);
    this.pending = new Int32Array(n);
    this.rankOf = new Int32Array(n);
    this.bucket = new Int32Array(n + 1);
    this.byValue = new Int32Array(2 * n + 1);
    this.order = new Int32Array(n);
    this.tailFrom = new Float64Array(n + 1);
    this.keys = new Float64Array(n);
    this.finish = new Float64Array(n);
    this.shareLevels = n > LOOKAHEAD_MAX_GRAPH;
    this.eftAll = new Float64Array(this.shareLevels ? n : 0);
    this.inDegreeAll = new Float64Array(this.shareLevels ? n : 0);
    this.tailAll = new Float64Array(this.shareLevels ? n : 0);
    this.lateAll = new Float64Array(this.shareLevels ? n : 0);
    this.memoize = n <= LOOKAHEAD_MAX_GRAPH;
    this.memo = new Map();
    this.stamp = 0;
  }

  levelArray(shared: Float64Array, m: number): Float64Array {
    return this.shareLevels ? shared : new Float64Array(m);
  }

  /**
   * Fills `order` with the positions 0…m-1 of `key` sorted by key, equal keys in position order, and
   * `keys` with the distinct keys ascending; returns how many. Small sets (most of them) use an
   * insertion sort; larger ones rank each member among the sorted distinct keys and counting-sort.
   */
  sortByKey(key: Float64Array, m: number): number {
    const { order, keys } = this;
    if (m <= SMALL_SORT) {
      for (let i = 0; i < m; i++) {
        const x = key[i]!;
        let j = i - 1;
        for (; j >= 0 && key[order[j]!]! > x; j--) order[j + 1] = order[j]!;
        order[j + 1] = i;
      }
      let distinct = 0;
      for (let j = 0; j < m; j++) {
        const x = key[order[j]!]!;
        if (distinct === 0 || keys[distinct - 1] !== x) keys[distinct++] = x;
      }
      return distinct;
    }
    // Whole-number keys spanning at most twice the set (whole-number durations: earliest finishes
    // and latest starts are then whole numbers no larger than the set's total duration) are
    // counted by value: no comparison sort of the keys and no binary search per member.
    let lo = key[0]!;
    let hi = lo;
    let whole = true;
    for (let i = 0; i < m; i++) {
      const x = key[i]!;
      if (x < lo) lo = x;
      else if (x > hi) hi = x;
      if (whole && !Number.isInteger(x)) whole = false;
    }
    if (whole && hi - lo < 2 * m) {
      const byValue = this.byValue;
      const span = hi - lo + 1;
      byValue.fill(0, 0, span + 1);
      for (let i = 0; i < m; i++) byValue[key[i]! - lo + 1]!++;
      let distinct = 0;
      for (let v = 1; v <= span; v++) {
        if (byValue[v] !== 0) keys[distinct++] = lo + v - 1;
        byValue[v]! += byValue[v - 1]!;
      }
      for (let i = 0; i < m; i++) order[byValue[key[i]! - lo]!++] = i;
      return distinct;
    }
    const { bucket, rankOf } = this;
    const distinct = sortDistinct(key, m, keys);
    bucket.fill(0, 0, distinct + 1);
    for (let i = 0; i < m; i++) bucket[(rankOf[i] = lowerBound(keys, distinct, key[i]!)) + 1]!++;
    for (let r = 1; r <= distinct; r++) bucket[r]! += bucket[r - 1]!;
    for (let i = 0; i < m; i++) order[bucket[rankOf[i]!]!++] = i;
    return distinct;
  }

  /** Longest path through the induced subgraph `set` (in topological order). */
  criticalPathOf(set: readonly number[]): number {
    const { mark, predAt, predTo, finish, dur } = this;
    const s = ++this.stamp;
    for (let i = 0; i < set.length; i++) mark[set[i]!] = s;
    let best = 0;
    for (let vi = 0; vi < set.length; vi++) {
      const v = set[vi]!;
      let start = 0;
      for (let pe = predAt[v]!, pEnd = predAt[v + 1]!; pe < pEnd; pe++) {
        const p = predTo[pe]!;
        if (mark[p] === s && finish[p]! > start) start = finish[p]!;
      }
      finish[v] = start + dur[v]!;
      if (finish[v]! > best) best = finish[v]!;
    }
    return best;
  }

  decompose(set: readonly number[], depth: number): IrControl {
    if (set.length === 1) return controlStep(set[0]!);
    if (!this.memoize) return this.decomposeOnce(set, depth);
    let h = 0x811c9dc5 ^ depth;
    for (let i = 0; i < set.length; i++) h = Math.imul(h ^ set[i]!, 0x01000193);
    const bucket = this.memo.get(h);
    if (bucket !== undefined) {
      for (const e of bucket) if (e.depth === depth && sameMembers(e.set, set)) return e.control;
    }
    const control = this.decomposeOnce(set, depth);
    if (bucket === undefined) this.memo.set(h, [{ set, depth, control }]);
    else bucket.push({ set, depth, control });
    return control;
  }

  decomposeOnce(set: readonly number[], depth: number): IrControl {
    const { mark, pos, predAt, predTo, succAt, succTo, dur } = this;
    // Members are marked once; the marks hold until the first recursive call below.
    const s = ++this.stamp;
    for (let i = 0; i < set.length; i++) mark[set[i]!] = s;
    // A path becomes one flat sequence whatever cuts are chosen (sequenceOf flattens the halves), so
    // it skips the sweeps: about half the sets a large DAG breaks into are short paths.
    if (this.isPath(set, s)) return stepSequence(set);
    const components = this.weakComponents(set, s);
    if (components.length > 1) {
      const branches = new Array<IrControl>();
      for (const c of components) branches.push(this.decompose(c, depth));
      const parallel = {} as { type: 'parallel'; branches: readonly IrControl[] };
      parallel.type = 'parallel';
      parallel.branches = branches;
      return parallel;
    }
    // One connected, non-trivial component: choose a downward-closed cut A | B.
    // Earliest finish and longest tail of each member, indexed by its position in `set` (which is in
    // topological order): a large graph's levels share node-sized arrays (see eftAll), a small one's
    // get arrays of the set's size.
    const m = set.length;
    for (let i = 0; i < m; i++) pos[set[i]!] = i;
    const eft = this.levelArray(this.eftAll, m);
    // Predecessors inside the set, counted once for both sweeps.
    const inDegree = this.levelArray(this.inDegreeAll, m);
    for (let i = 0; i < m; i++) {
      const v = set[i]!;
      let start = 0;
      let inSet = 0;
      for (let pe = predAt[v]!, pEnd = predAt[v + 1]!; pe < pEnd; pe++) {
        const p = predTo[pe]!;
        if (mark[p] !== s) continue;
        inSet++;
        if (eft[pos[p]!]! > start) start = eft[pos[p]!]!;
      }
      eft[i] = start + dur[v]!;
      inDegree[i] = inSet;
    }
    const tail = this.levelArray(this.tailAll, m);
    for (let i = m - 1; i >= 0; i--) {
      const v = set[i]!;
      let rest = 0;
      for (let ce = succAt[v]!, cEnd = succAt[v + 1]!; ce < cEnd; ce++) {
        const c = succTo[ce]!;
        if (mark[c] === s && tail[pos[c]!]! > rest) rest = tail[pos[c]!]!;
      }
      tail[i] = rest + dur[v]!;
    }
    let cp = 0;
    for (let i = 0; i < m; i++) if (eft[i]! > cp) cp = eft[i]!;
    // Latest start (relative): a cut "must start before t" is downward closed like "finished by t".
    const late = this.levelArray(this.lateAll, m);
    for (let i = 0; i < m; i++) late[i] = cp - tail[i]!;
    // Candidate cuts: "finished by t" (earliest) and "must start before t" (latest) families. The
    // sweeps below score every threshold in one pass, so only sets that look ahead sample them.
    const lookahead = depth > 0 && m <= LOOKAHEAD_MAX_NODES && this.n <= LOOKAHEAD_MAX_GRAPH;
    // Large sets (no lookahead) prefer, among the cuts with the best lower bound, one leaving at least
    // 1/16 of the set on each side: cutting thin slices off a long DAG one level at a time made the
    // recursion O(n) levels deep (quadratic), and the balanced cuts add no more synchronisation edges.
    const level = new CutLevel(
      set,
      s,
      eft,
      tail,
      inDegree,
      lookahead,
      m > LOOKAHEAD_MAX_NODES ? m - 2 * Math.floor(m / BALANCE_PARTS) : -1,
    );
    this.sweep(level, eft, false);
    this.sweep(level, late, true);
    const { scored, bestAll, bestBalanced } = level;
    // Equal scores: fewer synchronisation edges (an exact series split adds none), then the more
    // balanced cut, which keeps the recursion shallow on long chains.
    if (!lookahead && bestAll !== undefined)
      scored.push(bestBalanced !== undefined && bestBalanced.score === bestAll.score ? bestBalanced : bestAll);
    scored.sort(byScore);
    let best: { a: number[]; b: number[]; score: number } | undefined;
    if (scored[0] !== undefined) {
      const halves = split(scored[0].cut, set, eft, late);
      best = { a: halves.a, b: halves.b, score: scored[0].score };
    }
    if (best !== undefined && lookahead) {
      // Look ahead on small sets: the halves' real makespans. Candidates come in lower-bound order,
      // so the search stops as soon as no remaining cut can beat the best real makespan.
      let bestReal = Infinity;
      for (const c of scored) {
        if (c.score >= bestReal - 1e-9) break;
        const halves = split(c.cut, set, eft, late);
        const real = makespanOf(this.decompose(halves.a, depth - 1), dur) + makespanOf(this.decompose(halves.b, depth - 1), dur);
        if (real < bestReal - 1e-9) {
          bestReal = real;
          best = { ...halves, score: c.score };
        }
      }
    }
    if (best === undefined) {
      // Unreachable for a connected set of ≥2 nodes with positive durations; fall back to one-by-one.
      return stepSequence(set);
    }
    return sequenceOf([this.decompose(best.a, depth), this.decompose(best.b, depth)]);
  }

  /**
   * One sweep per family moves members from B to A in key order (ties in topological order, so a
   * member always moves after its predecessors) and reads every sampled cut off the running
   * counts. A is downward closed and B upward closed, so A's critical path is its largest earliest
   * finish and B's its largest tail; the edges a cut adds are sinks(A) × sources(B) minus the
   * direct edges between them, kept up to date as members move. A member v is a sink of A when
   * `side[v] === 1 && succInA[v] === 0`, a source of B when `side[v] === 2 && predInB[v] === 0`.
   */
  sweep(level: CutLevel, key: Float64Array, isLate: boolean): void {
    const { mark, side, succInA, predInB, predAt, predTo, succAt, succTo, order, keys, tailFrom } = this;
    const { set, s, eft, tail, inDegree, lookahead, balancedLimit } = level;
    const m = set.length;
    const k = lookahead ? MAX_CANDIDATES : Infinity;
    // Members in key order, equal keys in topological (position) order.
    const distinct = this.sortByKey(key, m);
    // Every distinct key but the last (earliest) or the first (latest) is a threshold, sampled to k.
    const from = isLate ? 1 : 0;
    const count = distinct - 1;
    const taken = Math.min(count, k);
    tailFrom[m] = 0;
    for (let j = m - 1; j >= 0; j--) tailFrom[j] = Math.max(tailFrom[j + 1]!, tail[order[j]!]!);
    let sources = 0;
    for (let i = 0; i < m; i++) {
      const v = set[i]!;
      side[v] = 2;
      succInA[v] = 0;
      predInB[v] = inDegree[i]!;
      if (inDegree[i] === 0) sources++;
    }
    let sinks = 0;
    let direct = 0;
    let j = 0;
    let cpA = 0;
    for (let ti = 0; ti < taken; ti++) {
      const t = keys[from + (taken === count ? ti : Math.floor((ti * count) / k))]!;
      for (; j < m; j++) {
        const i = order[j]!;
        if (isLate ? !(key[i]! < t) : !(key[i]! <= t)) break;
        const v = set[i]!;
        if (eft[i]! > cpA) cpA = eft[i]!;
        side[v] = 1;
        if (predInB[v] === 0) {
          sources--;
          for (let pe = predAt[v]!, pEnd = predAt[v + 1]!; pe < pEnd; pe++) {
            const p = predTo[pe]!;
            if (mark[p] === s && side[p] === 1 && succInA[p] === 0) direct--;
          }
        }
        for (let pe = predAt[v]!, pEnd = predAt[v + 1]!; pe < pEnd; pe++) {
          const p = predTo[pe]!;
          if (mark[p] !== s || succInA[p]++ !== 0) continue;
          sinks--;
          for (let ce = succAt[p]!, cEnd = succAt[p + 1]!; ce < cEnd; ce++) {
            const c = succTo[ce]!;
            if (mark[c] === s && side[c] === 2 && predInB[c] === 0) direct--;
          }
        }
        // No successor has moved yet: v is a sink of A.
        sinks++;
        for (let ce = succAt[v]!, cEnd = succAt[v + 1]!; ce < cEnd; ce++) {
          const c = succTo[ce]!;
          if (mark[c] !== s || --predInB[c]! !== 0) continue;
          sources++;
          for (let pe = predAt[c]!, pEnd = predAt[c + 1]!; pe < pEnd; pe++) {
            const p = predTo[pe]!;
            if (mark[p] === s && side[p] === 1 && succInA[p] === 0) direct++;
          }
        }
      }
      if (j === 0 || j === m) continue;
      // Scored from locals: an object per threshold (and a spread per improvement) cost more than the sweep.
      const score = cpA + tailFrom[j]!;
      const added = sinks * sources - direct;
      const imbalance = Math.abs(2 * j - m);
      // Without lookahead only the best cut matters: keep it (and the best balanced one) instead of sorting them all.
      if (lookahead) level.scored.push({ cut: { late: isLate, t }, score, added, imbalance });
      else {
        if (level.bestAll === undefined || compareScore(score, added, imbalance, level.bestAll) < 0)
          level.bestAll = { cut: { late: isLate, t }, score, added, imbalance };
        if (
          imbalance <= balancedLimit &&
          (level.bestBalanced === undefined || compareScore(score, added, imbalance, level.bestBalanced) < 0)
        ) {
          level.bestBalanced = { cut: { late: isLate, t }, score, added, imbalance };
        }
      }
    }
  }

  /**
   * Whether the members marked `s` form a path in `set` order: each one's only predecessor in the
   * set is the member before it (the first has none, `set` being in topological order).
   */
  isPath(set: readonly number[], s: number): boolean {
    const { mark, predAt, predTo } = this;
    for (let i = 1; i < set.length; i++) {
      let inSet = 0;
      for (let pe = predAt[set[i]!]!, pEnd = predAt[set[i]! + 1]!; pe < pEnd; pe++) {
        const p = predTo[pe]!;
        if (mark[p] !== s) continue;
        if (p !== set[i - 1] || ++inSet > 1) return false;
      }
      if (inSet === 0) return false;
    }
    return true;
  }

  /**
   * Weakly connected components of the induced subgraph (members marked `s`), each in topological
   * order (members are labelled first, then collected in `set` order, which is topological), ordered
   * by smallest node.
   */
  weakComponents(set: readonly number[], s: number): number[][] {
    const { mark, seen, comp, pending, succAt, succTo, predAt, predTo } = this;
    let count = 0;
    // The search stack is the node-sized `pending` (a node is pushed once, when first seen).
    let top = 0;
    for (let r = 0; r < set.length; r++) {
      const root = set[r]!;
      if (seen[root] === s) continue;
      pending[top++] = root;
      seen[root] = s;
      comp[root] = count;
      while (top > 0) {
        const v = pending[--top]!;
        for (let we = succAt[v]!, wEnd = succAt[v + 1]!; we < wEnd; we++) {
          const w = succTo[we]!;
          if (mark[w] === s && seen[w] !== s) ((seen[w] = s), (comp[w] = count), (pending[top++] = w));
        }
        for (let we = predAt[v]!, wEnd = predAt[v + 1]!; we < wEnd; we++) {
          const w = predTo[we]!;
          if (mark[w] === s && seen[w] !== s) ((seen[w] = s), (comp[w] = count), (pending[top++] = w));
        }
      }
      count++;
    }
    // One component (the common case) is `set` itself.
    if (count === 1) return [set as number[]];
    // Built with push, not map (see stepSequence); the member lists, which the recursion below works
    // on, with `new Array()` rather than `[]` (see controlStep).
    const out: { members: number[]; min: number }[] = [];
    for (let c = 0; c < count; c++) {
      const component = {} as { members: number[]; min: number };
      component.members = new Array<number>();
      component.min = Infinity;
      out.push(component);
    }
    for (let vi = 0; vi < set.length; vi++) {
      const v = set[vi]!;
      const c = out[comp[v]!]!;
      c.members.push(v);
      if (v < c.min) c.min = v;
    }
    out.sort(bySmallestMember);
    const components = new Array<number[]>();
    for (const c of out) components.push(c.members);
    return components;
  }
}

interface MemoEntry {
  readonly set: readonly number[];
  readonly depth: number;
  readonly control: IrControl;
}

/** The set being cut and what both sweeps of it read and keep (the best cuts found so far). */
class CutLevel {
  readonly scored: ScoredCut[] = [];
  bestAll: ScoredCut | undefined = undefined;
  bestBalanced: ScoredCut | undefined = undefined;
  constructor(
    readonly set: readonly number[],
    /** The stamp its members are marked with. */
    readonly s: number,
    readonly eft: Float64Array,
    readonly tail: Float64Array,
    readonly inDegree: Float64Array,
    readonly lookahead: boolean,
    /** Most imbalance a balanced cut may have (-1: the set is too small to prefer one). */
    readonly balancedLimit: number,
  ) {}
}

function bySmallestMember(x: { min: number }, y: { min: number }): number {
  return x.min - y.min;
}

/** Whether position `i` is in A under cut `c`. */
function inA(c: Cut, i: number, eft: Float64Array, late: Float64Array): boolean {
  return c.late ? late[i]! < c.t : eft[i]! <= c.t;
}

/** The members of `set` on each side of cut `c`. */
function split(c: Cut, set: readonly number[], eft: Float64Array, late: Float64Array): { a: number[]; b: number[] } {
  // `new Array()`, not `[]`: the halves live through the recursion (see controlStep).
  const a = new Array<number>();
  const b = new Array<number>();
  for (let i = 0; i < set.length; i++) (inA(c, i, eft, late) ? a : b).push(set[i]!);
  return { a, b };
}

/** A candidate cut: A = the members that finish by `t` (earliest) or must start before `t` (latest). */
interface Cut {
  readonly late: boolean;
  readonly t: number;
}

interface ScoredCut {
  readonly cut: Cut;
  /** Critical path of A plus that of B: a lower bound of the makespan after this cut. */
  readonly score: number;
  /** Synchronisation edges the cut adds (only computed where it can decide). */
  added: number;
  readonly imbalance: number;
}

/** Lower bound first, then fewer synchronisation edges, then the more balanced cut. */
function byScore(x: Omit<ScoredCut, 'cut'>, y: Omit<ScoredCut, 'cut'>): number {
  return compareScore(x.score, x.added, x.imbalance, y);
}

/** byScore with the first cut given by its figures. */
function compareScore(score: number, added: number, imbalance: number, y: Omit<ScoredCut, 'cut'>): number {
  return score - y.score || added - y.added || imbalance - y.imbalance;
}

/** Makespan of a control tree: a sequence adds up, a parallel takes its longest branch. */
export function makespanOf(control: IrControl, durations: readonly number[]): number {
  switch (control.type) {
    case 'step':
      return durations[control.step] ?? 1;
    case 'sequence': {
      let sum = 0;
      for (const c of control.items) sum += makespanOf(c, durations);
      return sum;
    }
    case 'parallel': {
      let max = 0;
      for (const c of control.branches) max = Math.max(max, makespanOf(c, durations));
      return max;
    }
  }
}

/** The naive lowering peer: one Parallel per longest-path level, levels in sequence. */
export function levelMakespan(n: number, edges: readonly (readonly [number, number])[], durations: readonly number[]): number {
  const succ: number[][] = Array.from({ length: n }, () => []);
  const pred: number[][] = Array.from({ length: n }, () => []);
  for (const [a, b] of edges) {
    succ[a]!.push(b);
    pred[b]!.push(a);
  }
  const level = new Int32Array(n);
  const levels: number[] = [];
  for (const v of acyclicOrder(succ, pred)) {
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

/**
 * The steps of `set` one after another. Control lists are built with push throughout: `map` makes
 * holey arrays until it is optimised and packed ones after, and the lowerer's optimised code was
 * thrown away each time the kind of a `branches` / `items` list changed under it.
 */
function stepSequence(set: readonly number[]): IrControl {
  const items = new Array<IrControl>();
  for (const step of set) items.push(controlStep(step));
  return controlSequence(items);
}

function sequenceOf(items: readonly IrControl[]): IrControl {
  const flat = new Array<IrControl>();
  for (const c of items) {
    if (c.type === 'sequence') flat.push(...c.items);
    else flat.push(c);
  }
  return controlSequence(flat);
}

/**
 * Control nodes are assigned onto `{}` and their lists made with `new Array()`, not written as
 * literals: the control tree lives through the lowering, and V8 pretenures the allocation site of a
 * literal whose objects outlive a scavenge, which left every compile's tree in the old space until a
 * mark-compact, on fresh pages each time (see docs/performance.md).
 */
function controlStep(step: number): IrControl {
  const node = {} as { type: 'step'; step: number };
  node.type = 'step';
  node.step = step;
  return node;
}

/** A sequence node (see controlStep). */
function controlSequence(items: readonly IrControl[]): IrControl {
  const node = {} as { type: 'sequence'; items: readonly IrControl[] };
  node.type = 'sequence';
  node.items = items;
  return node;
}

function sameMembers(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Index of the first of the `count` sorted `xs` that is ≥ x. */
function lowerBound(xs: Float64Array, count: number, x: number): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Up to this many keys an insertion sort beats sorting a typed array (a call into the runtime). */
const SMALL_SORT = 32;

/** Writes the distinct values of `key` (finite numbers) into `out` in ascending order; returns how many. */
function sortDistinct(key: Float64Array, m: number, out: Float64Array): number {
  // Sorted in `out` itself: a sorted copy per sweep allocated a buffer each time.
  for (let i = 0; i < m; i++) out[i] = key[i]!;
  out.subarray(0, m).sort();
  let count = 0;
  for (let i = 0; i < m; i++) if (i === 0 || out[i] !== out[count - 1]) out[count++] = out[i]!;
  return count;
}

/** Where each node's list starts in the flattened adjacency (`at[v]` … `at[v + 1]`). */
function offsets(lists: readonly number[][]): Int32Array {
  const at = new Int32Array(lists.length + 1);
  for (let v = 0; v < lists.length; v++) at[v + 1] = at[v]! + lists[v]!.length;
  return at;
}

/** The lists one after another, in their order. */
function targets(lists: readonly number[][], at: Int32Array): Int32Array {
  const to = new Int32Array(at[lists.length]!);
  for (let v = 0; v < lists.length; v++) to.set(lists[v]!, at[v]!);
  return to;
}

/** The shared topological order (smallest index first among ready nodes); the input must be a DAG. */
function acyclicOrder(succ: readonly number[][], pred: readonly number[][]): number[] {
  const order = topologicalOrderOfAdjacency(succ, pred);
  if (order === undefined) throw new Error('scheduleDag: the graph has a cycle');
  return order;
}

/** Ordering pairs the control tree imposes that the DAG's transitive closure does not contain. */
function addedEdgesOf(control: IrControl, n: number, succ: readonly number[][], topo: readonly number[]): [number, number][] {
  const words = Math.ceil(n / 32);
  const added: [number, number][] = [];
  addEdgesOf(control, reachability(n, words, succ, topo), words, added);
  return added.sort(byPair);
}

function byPair(x: readonly [number, number], y: readonly [number, number]): number {
  return x[0] - y[0] || x[1] - y[1];
}

/** Adds to `added` the pairs `c` orders that `reach` (see reachability) does not (a function, not a closure: see DagScheduler). */
function addEdgesOf(c: IrControl, reach: Uint32Array, words: number, added: [number, number][]): void {
  if (c.type === 'parallel') for (const b of c.branches) addEdgesOf(b, reach, words, added);
  if (c.type !== 'sequence') return;
  for (const item of c.items) addEdgesOf(item, reach, words, added);
  for (let i = 0; i + 1 < c.items.length; i++) {
    for (const a of exitsOf(c.items[i]!)) {
      for (const b of entriesOf(c.items[i + 1]!)) if ((reach[a * words + (b >>> 5)]! & (1 << (b & 31))) === 0) added.push([a, b]);
    }
  }
}

/**
 * Each node's transitive successors as bit rows of `words` words. A function of its own: inside
 * addedEdgesOf this loop was compiled on its own stack replacement, which was kept from compile to
 * compile and fell back to the interpreter at the first call after it every time.
 */
function reachability(n: number, words: number, succ: readonly number[][], topo: readonly number[]): Uint32Array {
  const reach = new Uint32Array(n * words);
  for (let i = topo.length - 1; i >= 0; i--) {
    const v = topo[i]!;
    const out = succ[v]!;
    for (let k = 0; k < out.length; k++) {
      const c = out[k]!;
      reach[v * words + (c >>> 5)]! |= 1 << (c & 31);
      for (let w = 0; w < words; w++) reach[v * words + w]! |= reach[c * words + w]!;
    }
  }
  return reach;
}

// Both collect into one array (flatMap allocated a list per nested branch, for every sequence pair).
function exitsOf(c: IrControl, out: number[] = []): number[] {
  if (c.type === 'step') out.push(c.step);
  else if (c.type === 'parallel') for (const b of c.branches) exitsOf(b, out);
  else if (c.items.length > 0) exitsOf(c.items[c.items.length - 1]!, out);
  return out;
}

function entriesOf(c: IrControl, out: number[] = []): number[] {
  if (c.type === 'step') out.push(c.step);
  else if (c.type === 'parallel') for (const b of c.branches) entriesOf(b, out);
  else if (c.items.length > 0) entriesOf(c.items[0]!, out);
  return out;
}
