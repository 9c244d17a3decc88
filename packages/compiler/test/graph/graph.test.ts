import { describe, expect, it } from 'vitest';
import { findCycle, topologicalOrder, topologicalOrderOfAdjacency } from '@stepforge/compiler';

describe('Function: findCycle', () => {
  it('returns the path from the node the walk re-entered, so its last pair is the closing edge', () => {
    // 0 → 2 → 1 → 2: the walk re-enters 2.
    expect(
      findCycle(3, [
        [0, 2],
        [1, 2],
        [2, 1],
      ]),
    ).toEqual([2, 1, 2]);
  });
  it('starts the same cycle at its smallest node when asked (how the DSL names a cycle)', () => {
    expect(
      findCycle(
        3,
        [
          [0, 2],
          [1, 2],
          [2, 1],
        ],
        { startAtSmallest: true },
      ),
    ).toEqual([1, 2, 1]);
  });
  it('finds nothing in a DAG and a self-loop as [a, a]', () => {
    expect(
      findCycle(3, [
        [0, 1],
        [0, 2],
        [1, 2],
      ]),
    ).toBeUndefined();
    expect(
      findCycle(
        2,
        [
          [0, 1],
          [1, 1],
        ],
        { startAtSmallest: true },
      ),
    ).toEqual([1, 1]);
  });
});

describe('Function: topologicalOrder', () => {
  it('puts the smallest ready index first, whatever order the edges come in', () => {
    expect(
      topologicalOrder(4, [
        [3, 0],
        [2, 1],
      ]),
    ).toEqual([2, 1, 3, 0]);
    expect(topologicalOrderOfAdjacency([[], [], [1], [0]], [[3], [2], [], []])).toEqual([2, 1, 3, 0]);
  });
  it('answers undefined for a cyclic graph', () => {
    expect(
      topologicalOrder(3, [
        [0, 1],
        [1, 2],
        [2, 1],
      ]),
    ).toBeUndefined();
    expect(topologicalOrderOfAdjacency([[1], [0]], [[1], [0]])).toBeUndefined();
  });
  it('orders a 10,000-node chain without deep recursion', () => {
    const n = 10_000;
    const edges = Array.from({ length: n - 1 }, (_, i) => [n - 1 - i, n - 2 - i] as [number, number]);
    const order = topologicalOrder(n, edges)!;
    expect(order[0]).toBe(n - 1);
    expect(order[n - 1]).toBe(0);
  });
});
