import { describe, it, expect } from 'vitest';
import { layoutGraph, stateGraph } from '../../web/stateGraph.js';

const task = (next?: string) => ({ Type: 'Task', ...(next ? { Next: next } : { End: true }) });
const caught = (next?: string) => ({ ...task(next), Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Failed' }] });
const DEFINITION = {
  StartAt: 'first',
  States: {
    both: {
      Type: 'Parallel',
      Next: 'each',
      Branches: [
        { StartAt: 'a', States: { a: task() } },
        { StartAt: 'b1', States: { b1: task('b2'), b2: task() } },
      ],
      Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Failed' }],
    },
    each: { Type: 'Map', Next: 'last', ItemProcessor: { StartAt: 'item', States: { item: { Type: 'Pass', End: true } } } },
    first: caught('both'),
    last: caught(),
    Failed: { Type: 'Fail' },
  },
};

describe('Function: stateGraph', () => {
  it("draws Parallel and Map as groups, enters each branch, and leaves from each branch's end", () => {
    const g = stateGraph(DEFINITION as never);
    expect(g.groups).toEqual([
      { id: 'group:both', state: 'both', type: 'Parallel' },
      { id: 'group:each', state: 'each', type: 'Map' },
    ]);
    expect(g.nodes.find((n) => n.id === 'both/1/b2')).toEqual({ id: 'both/1/b2', name: 'b2', type: 'Task', group: 'group:both' });
    const next = g.edges.filter((e) => e.kind !== 'catch').map((e) => `${e.from}>${e.to}`);
    expect(next).toEqual([
      'both>both/0/a',
      'both/1/b1>both/1/b2',
      'both>both/1/b1',
      'each>each/0/item',
      'both/0/a>each',
      'both/1/b2>each',
      'each/0/item>last',
      'first>both',
    ]);
  });

  it('draws a Fail state that several states catch into beside each of them', () => {
    const g = stateGraph(DEFINITION as never);
    const catches = g.edges.filter((e) => e.kind === 'catch');
    expect(catches.map((e) => `${e.from}>${e.to}`)).toEqual(['both>Failed#both', 'first>Failed#first', 'last>Failed#last']);
    expect(g.nodes.filter((n) => n.name === 'Failed').map((n) => [n.id, n.group ?? null])).toEqual([
      ['Failed#both', null],
      ['Failed#first', null],
      ['Failed#last', null],
    ]);
    expect(g.nodes.some((n) => n.id === 'Failed')).toBe(false);
  });
});

describe('Function: layoutGraph', () => {
  it("puts every state inside its group's box, and no two states on top of each other", () => {
    const g = stateGraph(DEFINITION as never);
    const l = layoutGraph(g);
    for (const n of g.nodes) {
      const b = l.nodes.get(n.id)!;
      expect(b.x - b.width / 2).toBeGreaterThanOrEqual(0);
      expect(b.y + b.height / 2).toBeLessThanOrEqual(l.height);
      if (!n.group) continue;
      const box = l.groups.get(n.group)!;
      expect(b.x - b.width / 2).toBeGreaterThanOrEqual(box.x - box.width / 2);
      expect(b.x + b.width / 2).toBeLessThanOrEqual(box.x + box.width / 2);
      expect(b.y - b.height / 2).toBeGreaterThanOrEqual(box.y - box.height / 2);
      expect(b.y + b.height / 2).toBeLessThanOrEqual(box.y + box.height / 2);
    }
    const boxes = [...l.nodes.values()];
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, b] = [boxes[i]!, boxes[j]!];
        const overlap = Math.abs(a.x - b.x) < (a.width + b.width) / 2 && Math.abs(a.y - b.y) < (a.height + b.height) / 2;
        expect(overlap).toBe(false);
      }
    expect(l.edges.every((e) => e.points.length >= 2)).toBe(true);
  });

  it('lays a long machine out in chunks, still without overlaps', () => {
    const States: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) States[`s${i}`] = { Type: 'Pass', ...(i < 99 ? { Next: `s${i + 1}` } : { End: true }) };
    const g = stateGraph({ StartAt: 's0', States } as never);
    const l = layoutGraph(g);
    const ys = Array.from({ length: 100 }, (_, i) => l.nodes.get(`s${i}`)!.y);
    // In flow order, top to bottom.
    expect(ys.every((y, i) => i === 0 || y > ys[i - 1]!)).toBe(true);
    expect(l.edges).toHaveLength(99);
  });
});
