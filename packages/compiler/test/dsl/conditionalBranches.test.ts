// A conditional's inline then: / else: steps (GraphN's Workflow Building skill): each is one step
// definition, named <conditional>.then / <conditional>.else, nested under the conditional.
import { describe, expect, it } from 'vitest';
import { compileDocument, loadDocument } from '@stepforge/compiler';

const doc = (branches: string) => `document: {dsl: "1.0", name: x, version: "0.1.0"}
agents: {a: "", b: ""}
steps:
  triage: {call: agent, agent: a}
  r:
    call: conditional
    condition: "\${steps.triage.output == 'P1'}"
${branches}`;

const diagnostics = (text: string) => {
  const r = loadDocument(text, { file: 'x.yaml' });
  return [...r.errors, ...r.warnings].map((e) => [e.code, e.message, e.location?.line, e.location?.column]);
};

describe('Function: loadDocument (conditional then/else)', () => {
  it('graphs the branches as steps nested under the conditional, their reads lifted to it', () => {
    const text = doc(
      '    then: {call: agent, agent: a, input_template: "URGENT: ${steps.triage.output}"}\n    else: {call: agent, agent: b}\n',
    );
    expect(diagnostics(text)).toEqual([]);
    const graph = loadDocument(text, { file: 'x.yaml', level: 'topology' }).graph!;
    expect(graph.nodes.map((n) => [n.handle, n.kind, n.parent])).toEqual([
      ['triage', 'agent', undefined],
      ['r', 'conditional', undefined],
      ['r.then', 'agent', 'r'],
      ['r.else', 'agent', 'r'],
    ]);
    expect(graph.edges).toEqual([[0, 1]]);
  });

  it('compiles to a Choice that runs one branch, nulls the other, and outputs the branch taken', () => {
    const c = compileDocument(doc('    then: {call: agent, agent: a}\n'), { file: 'x.yaml' });
    const states = c.asl['States'] as Record<string, Record<string, unknown>>;
    expect(states['r: then or else?']).toMatchObject({
      Type: 'Choice',
      Choices: [
        { Condition: '{% $s_r %}', Next: 'r.then' },
        { Condition: '{% true %}', Assign: { s_r_then: null }, Next: 'r: output' },
      ],
    });
    expect(states['r: output']!['Assign']).toEqual({ s_r: '{% $s_r ? $s_r_then : null %}' });
    expect(c.manifest.steps.map((s) => s.id)).toEqual(['triage', 'r', 'r.then']);
  });

  it('reports errors inside a branch where they are', () => {
    expect(diagnostics(doc('    then: {call: agnet, agent: a}\n'))).toEqual([
      [
        'schema',
        "steps.r.then.call: unknown step kind call: 'agnet'; did you mean 'agent'? (expected agent, function, mcp_tool, connector, conditional, for_each, while, parallel_analyzer, handoff_router or judge_loop)",
        8,
        18,
      ],
    ]);
    expect(diagnostics(doc('    else: {call: agent, agent: nobody}\n'))).toEqual([['unknown_agent', "unknown agent 'nobody'", 8, 32]]);
    expect(diagnostics(doc('    then: {agent: a}\n'))).toEqual([
      [
        'schema',
        "missing required field 'call' in steps.r.then (agent, function, mcp_tool, connector, conditional, for_each, while, parallel_analyzer, handoff_router or judge_loop)",
        8,
        5,
      ],
    ]);
    expect(diagnostics(doc('    then: {call: agent, agent: a, input_template: "${steps.r.output}"}\n'))).toEqual([
      ['cycle', "step 'r.then' inside 'r' reads 'r', which finishes only after its body", 8, 54],
    ]);
    expect(diagnostics(doc('    then: {call: agent, agent: a, input_tmplate: x}\n'))).toEqual([
      ['unknown_field', "unknown field 'input_tmplate' in steps.r.then; did you mean 'input_template'?", 8, 35],
    ]);
  });
});
