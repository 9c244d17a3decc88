import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { controlSteps, levelMakespan, makespanOf, scheduleDag, type IrControl } from '@stepforge/compiler';

/** Every [a, b] edge is respected by the control tree: a finishes before b starts. */
function respects(control: IrControl, edges: readonly (readonly [number, number])[]): boolean {
  // Earliest start / finish of each step in the control tree with unit durations.
  const start = new Map<number, number>();
  const finish = new Map<number, number>();
  const walk = (c: IrControl, t: number): number => {
    if (c.type === 'step') {
      start.set(c.step, t);
      finish.set(c.step, t + 1);
      return t + 1;
    }
    if (c.type === 'sequence') return c.items.reduce((acc, item) => walk(item, acc), t);
    return Math.max(t, ...c.branches.map((b) => walk(b, t)));
  };
  walk(control, 0);
  return edges.every(([a, b]) => finish.get(a)! <= start.get(b)!);
}

describe('Function: scheduleDag', () => {
  it('nests a series-parallel DAG without adding edges', () => {
    // a > [b & c] > d
    const s = scheduleDag(4, [
      [0, 1],
      [0, 2],
      [1, 3],
      [2, 3],
    ]);
    expect(s.addedEdges).toEqual([]);
    expect(s.control).toEqual({
      type: 'sequence',
      items: [
        { type: 'step', step: 0 },
        {
          type: 'parallel',
          branches: [
            { type: 'step', step: 1 },
            { type: 'step', step: 2 },
          ],
        },
        { type: 'step', step: 3 },
      ],
    });
  });

  it('adds exactly one synchronisation edge to the N shape a→c, a→d, b→d and keeps the critical path', () => {
    const s = scheduleDag(4, [
      [0, 2],
      [0, 3],
      [1, 3],
    ]);
    expect(s.addedEdges).toEqual([[1, 2]]);
    expect(s.makespan).toBe(2);
    expect(s.criticalPath).toBe(2);
  });

  it('prefers the cut that keeps a long chain on the critical path', () => {
    // a(10)→c(1), a→d(1), b(1)→d: cutting after {a, b} costs nothing extra.
    const s = scheduleDag(
      4,
      [
        [0, 2],
        [0, 3],
        [1, 3],
      ],
      [10, 1, 1, 1],
    );
    expect(s.makespan).toBe(11);
  });

  it('puts independent components in parallel, ordered by their smallest node', () => {
    const s = scheduleDag(3, []);
    expect(s.control).toEqual({
      type: 'parallel',
      branches: [
        { type: 'step', step: 0 },
        { type: 'step', step: 1 },
        { type: 'step', step: 2 },
      ],
    });
  });

  it('always covers every node once and respects every edge (random DAGs)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 25 }), fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 60 }), (n, pairs) => {
        const edges = [
          ...new Set(
            pairs
              .map(([x, y]) => {
                const a = x % n;
                const b = y % n;
                return a < b ? `${a},${b}` : b < a ? `${b},${a}` : '';
              })
              .filter(Boolean),
          ),
        ].map((e) => e.split(',').map(Number) as [number, number]);
        const s = scheduleDag(n, edges);
        expect(controlSteps(s.control).sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => i));
        expect(respects(s.control, edges)).toBe(true);
        expect(s.makespan).toBeGreaterThanOrEqual(s.criticalPath);
        expect(s.makespan).toBeLessThanOrEqual(levelMakespan(n, edges, new Array(n).fill(1)));
      }),
      { numRuns: 300 },
    );
  });

  it('computes makespans of control trees', () => {
    const c: IrControl = {
      type: 'sequence',
      items: [
        { type: 'step', step: 0 },
        {
          type: 'parallel',
          branches: [
            { type: 'step', step: 1 },
            { type: 'step', step: 2 },
          ],
        },
      ],
    };
    expect(makespanOf(c, [2, 5, 3])).toBe(7);
  });
});
