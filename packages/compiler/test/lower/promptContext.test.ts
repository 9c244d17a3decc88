// What a model step's handler appends to its prompt as "Context from earlier steps" (`inputs.steps`):
// the steps its input reads but its prompt does not place. A chain task's parents are its input;
// a DSL agent's prompt is its input_template as written (GraphN: instructions + the resolved
// template), so the steps its `when` guard reads, or those a mapping input already holds, are not
// appended to it.
import { describe, expect, it } from 'vitest';
import { compileDocument } from '../../src/index.js';

type State = Record<string, unknown>;

/** Every state of the definition, nested ones (Parallel branches, Map processors) included, by name. */
function allStates(states: Record<string, State>, out: Record<string, State> = {}): Record<string, State> {
  for (const [name, s] of Object.entries(states)) {
    out[name] = s;
    for (const b of (s['Branches'] as { States: Record<string, State> }[] | undefined) ?? []) allStates(b.States, out);
    const processor = s['ItemProcessor'] as { States: Record<string, State> } | undefined;
    if (processor) allStates(processor.States, out);
  }
  return out;
}

/** The `inputs` of a step's Lambda call. */
function inputsOf(text: string, file: string, state: string): Record<string, unknown> {
  const c = compileDocument(text, { file });
  const s = allStates(c.asl['States'] as Record<string, State>)[state]!;
  const args = (s['Arguments'] as Record<string, unknown>) ?? {};
  const payload = (args['Payload'] as Record<string, unknown> | undefined) ?? args;
  return payload['inputs'] as Record<string, unknown>;
}

const DSL = `document: { dsl: "1.0.0", name: Context, version: "0.1.0" }
agents: { W: "", E: "" }
functions: { echo: "" }
steps:
  gate: { call: conditional, condition: "\${true}", output: go }
  check: { call: function, function: echo, input: { ok: true } }
  guarded: { call: agent, agent: W, when: "\${steps.go.output && steps.check.output.ok}", input_template: "Write a haiku" }
  mapped: { call: agent, agent: W, input: { text: "\${steps.check.output}" } }
  placed: { call: agent, agent: W, input_template: "Check: \${steps.check.output}" }
  judged:
    call: judge_loop
    generator: W
    evaluator: E
    when: "\${steps.check.output.ok}"
    max_iterations: 1
    input_template: "Draft it"
`;

describe('Function: compileDocument (prompt context of model steps)', () => {
  it("appends nothing to a DSL agent's prompt for the steps its when guard reads", () => {
    expect(inputsOf(DSL, 'context.yaml', 'guarded')).toEqual({ value: 'Write a haiku' });
  });

  it('appends nothing for the steps a mapping input already holds', () => {
    const inputs = inputsOf(DSL, 'context.yaml', 'mapped');
    expect(inputs['steps']).toBeUndefined();
    expect(inputs['value']).toMatchObject({ text: expect.stringMatching(/^\{% .*check.* %\}$/) });
  });

  it('appends nothing when the template places the step, nor to the roles of a guarded judge_loop', () => {
    expect(inputsOf(DSL, 'context.yaml', 'placed')['steps']).toBeUndefined();
    const roles = Object.entries(allStates(compileDocument(DSL, { file: 'context.yaml' }).asl['States'] as Record<string, State>))
      .filter(([name]) => name.startsWith('judged') && name.includes('generator'))
      .map(([, s]) => ((s['Arguments'] as Record<string, unknown>)['inputs'] as Record<string, unknown>)['steps']);
    expect(roles.length).toBeGreaterThan(0);
    expect(roles).toEqual(roles.map(() => undefined));
  });

  it("still gives a chain task its parents' outputs its prompt does not place", () => {
    const chain = `chain: "plan@web-search > [draft & notes] > judge"
tasks:
  plan: { kind: model, prompt: "Plan" }
  draft: { kind: model, prompt: "Draft from \${steps.plan.output}" }
  notes: { kind: model, prompt: "Notes" }
  judge: { kind: model, prompt: "Judge \${steps.draft.output}" }
`;
    expect(inputsOf(chain, 'c.chain.yaml', 'notes')['steps']).toBe('{% {"plan": $s_plan} %}');
    expect(inputsOf(chain, 'c.chain.yaml', 'judge')['steps']).toMatch(/^\{% \{"notes": .*s_notes.*\} %\}$/);
    expect(inputsOf(chain, 'c.chain.yaml', 'draft')['steps']).toBeUndefined();
  });
});
