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
        '  n0 -.- s0',
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
        '  n0 -> n2;',
        '}',
        '',
      ].join('\n'),
    );
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
