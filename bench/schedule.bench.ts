// Schedule benchmark: 200 random DAGs (half series-parallel by construction, half not),
// random step durations. Each DAG is compiled to ASL; the ASL's makespan (Task durations summed along
// each state path, Parallel = its slowest branch) is divided by the DAG's critical path. Printed beside a
// naive level-by-level lowering (one Parallel per longest-path level). "ours": the compiler is given the
// step duration estimates (IrStep.estimatedDuration, e.g. from run history); "unit-estimate": it is not
// (every step assumed equal), which is what a first compile without history does. Never asserts.
import { compileIr, levelMakespan, scheduleDag, type IrDocument } from '@stepforge/compiler';
import { mulberry32 } from '../test/support/mulberry32.js';

const TARGET_MEAN = 1.05;
const TARGET_MAX = 1.33;

type Dag = { n: number; edges: [number, number][] };

/** A random series-parallel DAG: recursive series / parallel composition of `n` nodes. */
function spDag(n: number, rand: () => number): Dag {
  const edges: [number, number][] = [];
  let next = 0;
  // Returns [entries, exits] of a fragment with `size` nodes.
  const build = (size: number): [number[], number[]] => {
    if (size === 1) {
      const v = next++;
      return [[v], [v]];
    }
    const left = 1 + Math.floor(rand() * (size - 1));
    const a = build(left);
    const b = build(size - left);
    if (rand() < 0.5) {
      for (const x of a[1]) for (const y of b[0]) edges.push([x, y]);
      return [a[0], b[1]];
    }
    return [
      [...a[0], ...b[0]],
      [...a[1], ...b[1]],
    ];
  };
  build(n);
  return { n, edges };
}

/** A random DAG (edges only forward in index order) that is not series-parallel. */
function nonSpDag(n: number, rand: () => number): Dag {
  for (;;) {
    const edges: [number, number][] = [];
    for (let j = 1; j < n; j++) {
      // 0–2 parents: several roots are allowed, which is what makes N shapes possible.
      const k = Math.floor(rand() * 3);
      const parents = new Set<number>();
      for (let i = 0; i < k; i++) parents.add(Math.floor(rand() * j));
      for (const p of parents) edges.push([p, j]);
    }
    if (scheduleDag(n, edges).addedEdges.length > 0) return { n, edges };
  }
}

function irOf(d: Dag, dur?: readonly number[]): IrDocument {
  return {
    name: 'sched',
    format: 'chain',
    workflow: {
      steps: Array.from({ length: d.n }, (_, i) => ({
        id: `n${i}`,
        kind: 'function' as const,
        identity: `i${i}`,
        config: {},
        tools: [],
        secrets: [],
        ...(dur ? { estimatedDuration: dur[i]! } : {}),
      })),
      edges: d.edges,
      // A pure output so that no single sink decides the result.
      output: { kind: 'template', value: null, reads: [] },
    },
  };
}

/** Makespan of compiled ASL: Tasks take their step's duration, a Parallel its slowest branch. */
export function aslMakespan(states: Record<string, Record<string, unknown>>, start: string, duration: (state: string) => number): number {
  let t = 0;
  let cur: string | undefined = start;
  while (cur !== undefined) {
    const st: Record<string, unknown> = states[cur]!;
    if (st.Type === 'Task') t += duration(cur);
    if (st.Type === 'Parallel') {
      const branches = st.Branches as { StartAt: string; States: Record<string, Record<string, unknown>> }[];
      t += Math.max(...branches.map((b) => aslMakespan(b.States, b.StartAt, duration)));
    }
    cur = st.End === true ? undefined : (st.Next as string | undefined);
  }
  return t;
}

function criticalPath(d: Dag, dur: number[]): number {
  const finish = new Array<number>(d.n).fill(0);
  const preds: number[][] = Array.from({ length: d.n }, () => []);
  for (const [a, b] of d.edges) preds[b]!.push(a);
  for (let v = 0; v < d.n; v++) finish[v] = Math.max(0, ...preds[v]!.map((p) => finish[p]!)) + dur[v]!;
  return Math.max(...finish);
}

/** Prints the table. */
export default async function scheduleBench(): Promise<void> {
  const rand = mulberry32(2026);
  const rows: { sp: boolean; ours: number; blind: number; naive: number }[] = [];
  for (let k = 0; k < 200; k++) {
    const sp = k % 2 === 0;
    const n = 6 + Math.floor(rand() * 35);
    const dag = sp ? spDag(n, rand) : nonSpDag(n, rand);
    const dur = Array.from({ length: n }, () => 1 + Math.floor(rand() * 10));
    const cp = criticalPath(dag, dur);
    const makespan = (ir: IrDocument) => {
      const asl = compileIr(ir).asl as { StartAt: string; States: Record<string, Record<string, unknown>> };
      return aslMakespan(asl.States, asl.StartAt, (s) => dur[Number(s.slice(1))]!) / cp;
    };
    rows.push({ sp, ours: makespan(irOf(dag, dur)), blind: makespan(irOf(dag)), naive: levelMakespan(n, dag.edges, dur) / cp });
  }
  const stat = (xs: number[]) => ({ mean: xs.reduce((a, b) => a + b, 0) / xs.length, max: Math.max(...xs) });
  const table = [['DAGs', 'count', 'ours mean', 'ours max', 'unit-estimate mean', 'unit-estimate max', 'naive mean', 'naive max']];
  for (const [label, sel] of [
    ['all', () => true],
    ['series-parallel', (r: { sp: boolean }) => r.sp],
    ['not series-parallel', (r: { sp: boolean }) => !r.sp],
  ] as const) {
    const picked = rows.filter(sel);
    const o = stat(picked.map((r) => r.ours));
    const b = stat(picked.map((r) => r.blind));
    const v = stat(picked.map((r) => r.naive));
    table.push([
      label,
      String(picked.length),
      o.mean.toFixed(3),
      o.max.toFixed(3),
      b.mean.toFixed(3),
      b.max.toFixed(3),
      v.mean.toFixed(3),
      v.max.toFixed(3),
    ]);
  }
  const widths = table[0]!.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  for (const r of table) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  '));
  const all = stat(rows.map((r) => r.ours));
  const naive = stat(rows.map((r) => r.naive));
  console.log(
    `makespan ÷ critical path — target: mean ≤ ${TARGET_MEAN} (${all.mean <= TARGET_MEAN ? 'met' : 'NOT met'}), max ≤ ${TARGET_MAX} (${all.max <= TARGET_MAX ? 'met' : 'NOT met'}), better than naive (${all.mean < naive.mean && all.max <= naive.max ? 'yes' : 'NO'})`,
  );
}
