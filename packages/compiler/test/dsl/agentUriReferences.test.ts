// A step naming an agent by the res:// URI it is declared with names that agent.
import { describe, expect, it } from 'vitest';
import { compileDocument, loadDocument, loadDslDocument, type DslStep } from '@stepforge/compiler';

const BY_URI = `document: {dsl: "1.0.0", name: By URI, version: "0.1.0"}
agents:
  Writer: res://agents/writer
  Critic: res://agents/critic
steps:
  draft:
    call: agent
    agent: "res://agents/writer"
    input_template: "Write"
  review:
    call: judge_loop
    generator: res://agents/writer
    evaluator: res://agents/critic
    input_template: "Write"
  panel:
    call: parallel_analyzer
    analysts: [{agent: res://agents/critic, role: one}]
    aggregator: res://agents/writer
    input_template: "Look"
`;

describe('Function: loadDslDocument (agents named by their res:// URI)', () => {
  it("reads a step's agent written as its declared URI as the declared agent, in every agent field", () => {
    const r = loadDslDocument(BY_URI, { file: 'u.yaml' });
    expect(r.errors).toEqual([]);
    const [draft, review, panel] = r.document!.workflow.steps as DslStep[];
    expect(draft!.kind === 'agent' && draft.agent).toBe('Writer');
    expect(review!.kind === 'judge_loop' && [review.generator, review.evaluator]).toEqual(['Writer', 'Critic']);
    expect(panel!.kind === 'parallel_analyzer' && [panel.analysts.map((a) => a.agent), panel.aggregator]).toEqual([['Critic'], 'Writer']);
    const { asl } = compileDocument(BY_URI, { file: 'u.yaml' });
    expect(JSON.stringify(asl)).toContain('"config":{"agent":"Writer","uri":"res://agents/writer"}');
  });

  it('refuses a URI two agents are declared with, at the reference, naming both', () => {
    const r = loadDocument(
      `document: {dsl: "1.0.0", name: Shared URI, version: "0.1.0"}
agents: {Writer: res://agents/writer, Author: res://agents/writer}
steps:
  draft: {call: agent, agent: res://agents/writer}
`,
      { file: 'v.yaml' },
    );
    expect(
      r.errors.map((e) => ({ code: e.code, message: e.message, hint: e.hint, line: e.location?.line, column: e.location?.column })),
    ).toEqual([
      {
        code: 'unknown_agent',
        message: "unknown agent 'res://agents/writer'",
        hint: "'Writer' and 'Author' are each declared as res://agents/writer: name one of them",
        line: 4,
        column: 31,
      },
    ]);
  });
});
