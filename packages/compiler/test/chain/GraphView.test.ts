import { describe, expect, it } from 'vitest';
import { graphViewToJson, renderDot, renderMermaid, type GraphView } from '../../src/index.js';

const flat: GraphView = {
  nodes: [
    { handle: 'plan', kind: 'model', tools: ['web-search'] },
    { handle: 'fetch', kind: 'tool', tools: [] },
    { handle: 'merge', kind: 'pure', tools: [] },
  ],
  edges: [
    [0, 1],
    [1, 2],
  ],
};

const nested: GraphView = {
  nodes: [
    { handle: 'loop', kind: 'for_each', tools: [] },
    { handle: 'inner "q"', kind: 'agent', tools: ['x'], parent: 'loop' },
    { handle: 'after', kind: 'function', tools: [] },
  ],
  edges: [[0, 2]],
};

describe('Function: renderMermaid', () => {
  it('draws one node per step (shape by kind) and one arrow per edge', () => {
    expect(renderMermaid(flat)).toBe(
      [
        'flowchart TD',
        '  n0["plan<br/>(model)<br/>@web-search"]',
        '  n1("fetch<br/>(tool)")',
        '  n2{{"merge<br/>(pure)"}}',
        '  n0 --> n1',
        '  n1 --> n2',
        '',
      ].join('\n'),
    );
  });

  it('puts nested steps in a subgraph under their parent and escapes quotes', () => {
    expect(renderMermaid(nested)).toBe(
      [
        'flowchart TD',
        '  n0("loop<br/>(for_each)")',
        '  n2("after<br/>(function)")',
        '  subgraph s0["loop"]',
        '    n1("inner #quot;q#quot;<br/>(agent)<br/>@x")',
        '  end',
        '  n0 -.->|each| n1',
        '  n1 -.->|repeat| n0',
        '  n0 --> n2',
        '',
      ].join('\n'),
    );
  });
});

describe('Function: renderDot', () => {
  it('draws a digraph with clusters for nested steps', () => {
    expect(renderDot(nested)).toBe(
      [
        'digraph workflow {',
        '  rankdir=TB;',
        '  node [fontname="Helvetica"];',
        '  n0 [label="loop\\n(for_each)", shape=ellipse];',
        '  n2 [label="after\\n(function)", shape=ellipse];',
        '  subgraph cluster_0 {',
        '    label="loop";',
        '    n1 [label="inner \\"q\\"\\n(agent)\\n@x", shape=ellipse];',
        '  }',
        '  n0 -> n1 [style=dashed, label="each"];',
        '  n1 -> n0 [style=dashed, label="repeat"];',
        '  n0 -> n2;',
        '}',
        '',
      ].join('\n'),
    );
  });
});

/** A while whose body is a → b, beside c; a conditional with both branches. */
const bodies: GraphView = {
  nodes: [
    { handle: 'refine', kind: 'while', tools: [] },
    { handle: 'a', kind: 'agent', tools: [], parent: 'refine' },
    { handle: 'b', kind: 'agent', tools: [], parent: 'refine' },
    { handle: 'c', kind: 'agent', tools: [], parent: 'refine' },
    { handle: 'pick', kind: 'conditional', tools: [] },
    { handle: 'pick.then', kind: 'agent', tools: [], parent: 'pick' },
    { handle: 'pick.else', kind: 'function', tools: [], parent: 'pick' },
  ],
  edges: [
    [0, 4],
    [1, 2],
  ],
};

describe('Function: renderDot and renderMermaid (bodies)', () => {
  it("link a loop to the first steps of its body and its body's last steps back to it, a conditional to its branches", () => {
    const dot = renderDot(bodies).split('\n');
    expect(dot.filter((l) => l.includes('style=dashed'))).toEqual([
      '  n0 -> n1 [style=dashed, label="do"];',
      '  n0 -> n3 [style=dashed, label="do"];',
      '  n2 -> n0 [style=dashed, label="repeat"];',
      '  n3 -> n0 [style=dashed, label="repeat"];',
      '  n4 -> n5 [style=dashed, label="then"];',
      '  n4 -> n6 [style=dashed, label="else"];',
    ]);
    expect(dot).toContain('  n1 -> n2;');
    const mermaid = renderMermaid(bodies).split('\n');
    expect(mermaid.filter((l) => l.includes('-.->'))).toEqual([
      '  n0 -.->|do| n1',
      '  n0 -.->|do| n3',
      '  n2 -.->|repeat| n0',
      '  n3 -.->|repeat| n0',
      '  n4 -.->|then| n5',
      '  n4 -.->|else| n6',
    ]);
    expect(mermaid).toContain('  n1 --> n2');
  });
});

describe('Function: graphViewToJson', () => {
  it('keeps the documented key order and adds parent only when present', () => {
    expect(JSON.stringify(graphViewToJson(nested))).toBe(
      '{"nodes":[{"handle":"loop","kind":"for_each","tools":[]},{"handle":"inner \\"q\\"","kind":"agent","tools":["x"],"parent":"loop"},' +
        '{"handle":"after","kind":"function","tools":[]}],"edges":[[0,2]]}',
    );
  });
});
