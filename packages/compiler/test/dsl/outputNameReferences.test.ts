// `steps.<output name>`: GraphN's conditional note has later steps read a conditional by its
// `output:` (its canvas node id), `when: "${steps.should_summarize.output}"` for a step named
// step_name with `output: should_summarize`. Such a reference names that step.
import { describe, expect, it } from 'vitest';
import { compileDocument, loadDocument, loadDslDocument } from '@stepforge/compiler';

const BY_OUTPUT = `document: {dsl: "1.0.0", name: By output name, version: "0.1.0"}
agents: {Writer: ""}
input:
  include_summary: {type: boolean, default: true}
steps:
  step_name:
    call: conditional
    condition: "\${input.include_summary == true}"
    output: should_summarize
  summarise:
    call: agent
    agent: Writer
    when: "\${steps.should_summarize.output}"
    input_template: "Summarise"
  bare:
    call: agent
    agent: Writer
    when: steps.should_summarize.output && true
    input_template: "Flag: \${ steps.should_summarize.output }"
output:
  result: \${steps.summarise.output}
  flag: \${steps.should_summarize.output}
`;

describe('Function: loadDslDocument (steps.<output name>)', () => {
  it('reads a step by its output: name when no step has that name, as a dependency on that step', () => {
    const r = loadDslDocument(BY_OUTPUT, { file: 'f.yaml' });
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.document!.dependencies).toEqual([
      { from: 'step_name', to: 'summarise', via: 'reference' },
      { from: 'step_name', to: 'bare', via: 'reference' },
    ]);
  });

  it("compiles the references to the step's value (a guard, a bare guard, a template and the output)", () => {
    const { asl } = compileDocument(BY_OUTPUT, { file: 'f.yaml' });
    const text = JSON.stringify(asl);
    expect(text).not.toContain('should_summarize');
    expect(text).toContain('$s_step_name');
  });

  it('refuses an output: name that several steps share, naming them, at the reference', () => {
    const r = loadDocument(
      `document: {dsl: "1.0.0", name: Shared output, version: "0.1.0"}
agents: {Writer: ""}
steps:
  a: {call: conditional, output: flag}
  b: {call: conditional, output: flag}
  c: {call: agent, agent: Writer, when: "\${steps.flag.output}"}
`,
      { file: 'g.yaml' },
    );
    expect(
      r.errors.map((e) => ({ code: e.code, message: e.message, hint: e.hint, line: e.location?.line, column: e.location?.column })),
    ).toEqual([
      {
        code: 'unknown_step',
        message: "no step is named 'flag', and 'a' and 'b' all have output: flag",
        hint: 'read one of them by its step name: steps.a.output or steps.b.output',
        line: 6,
        column: 44,
      },
    ]);
  });

  it("keeps a step's own name first: a step named like another's output is the one read", () => {
    const r = loadDslDocument(`document: {dsl: "1.0.0", name: Name first, version: "0.1.0"}
steps:
  a: {call: conditional, output: b}
  b: {call: conditional}
  c: {call: conditional, condition: "\${steps.b.output}"}
`);
    expect(r.errors).toEqual([]);
    expect(r.document!.dependencies).toEqual([{ from: 'b', to: 'c', via: 'reference' }]);
  });

  it('orders a step after a step named by its output: name in after:, and refuses one that several steps share', () => {
    const r = loadDslDocument(`document: {dsl: "1.0.0", name: After output, version: "0.1.0"}
steps:
  step_name: {call: conditional, output: should_summarize}
  later: {call: conditional, after: [should_summarize]}
`);
    expect(r.errors).toEqual([]);
    expect(r.document!.dependencies).toEqual([{ from: 'step_name', to: 'later', via: 'after' }]);
    const shared = loadDocument(
      `document: {dsl: "1.0.0", name: Shared output, version: "0.1.0"}
steps:
  a: {call: conditional, output: flag}
  b: {call: conditional, output: flag}
  c: {call: conditional, after: flag}
  d: {call: conditional, after: [nope]}
`,
      { file: 'h.yaml' },
    );
    expect(shared.errors.map((e) => ({ code: e.code, message: e.message, hint: e.hint, line: e.location?.line }))).toEqual([
      {
        code: 'unknown_step',
        message: "no step is named 'flag', and 'a' and 'b' all have output: flag",
        hint: 'name it in after: by its step name',
        line: 5,
      },
      expect.objectContaining({ code: 'unknown_step', line: 6 }),
    ]);
  });
});
