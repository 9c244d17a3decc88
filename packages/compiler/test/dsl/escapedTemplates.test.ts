// `$${` writes a literal `${` (docs/dsl.md, Expressions). A string that holds only escapes and no
// expression is emitted into the state machine as a constant, so the escape must be undone there too:
// the step receives `${price}`, never `$${price}`.
import { describe, expect, it } from 'vitest';
import { compileDocument } from '@stepforge/compiler';
import { literalText } from '../../src/expr/parseTemplate.js';

const DOC = `document: { dsl: "1.0.0", name: Escapes, version: "0.1.0" }
agents: { W: "" }
functions: { echo: "" }
steps:
  a: { call: agent, agent: W, input_template: "Cost: $\${price}" }
  b: { call: function, function: echo, input: { lit: "$\${x}", list: ["$\${y}", 2], mixed: "$\${z} \${input.n}" } }
  c: { call: function, function: echo, after: [a, b], input_template: "plain text" }
output:
  text: "literal $\${o}"
`;

type States = Record<string, Record<string, unknown>>;

/** Every state of the definition, nested ones (Parallel branches) included, by name. */
function allStates(states: States, out: States = {}): States {
  for (const [name, s] of Object.entries(states)) {
    out[name] = s;
    for (const b of (s['Branches'] as { States: States }[] | undefined) ?? []) allStates(b.States, out);
  }
  return out;
}

describe('Function: literalText', () => {
  it('turns each escaped $${ into ${ and leaves other text as it is', () => {
    expect(literalText('Cost: $${price} and $${tax}')).toBe('Cost: ${price} and ${tax}');
    expect(literalText('$$${x}')).toBe('$${x}');
    expect(literalText('no dollars')).toBe('no dollars');
    expect(literalText('US$ 5 {x}')).toBe('US$ 5 {x}');
  });
});

describe('Function: compileDocument (escaped ${ in strings without an expression)', () => {
  const c = compileDocument(DOC, { file: 'escapes.yaml' });
  const states = allStates(c.asl['States'] as States);
  const inputs = (name: string) => (states[name]!['Arguments'] as { inputs: { value: unknown } }).inputs.value;

  it("gives an agent's input_template its literal ${", () => {
    expect(inputs('a')).toBe('Cost: ${price}');
  });

  it("gives a function's input its literal ${ in every string leaf, and evaluates the strings with an expression", () => {
    const value = inputs('b') as Record<string, unknown>;
    expect(value['lit']).toBe('${x}');
    expect(value['list']).toEqual(['${y}', 2]);
    expect(value['mixed']).toMatch(/^\{% .*"\$\{z\} " & .*%\}$/);
  });

  it('keeps text without a dollar sign as written', () => {
    expect(inputs('c')).toBe('plain text');
  });

  it("writes the workflow output's literal ${", () => {
    const last = Object.values(states).find((s) => typeof s['Output'] === 'string' && String(s['Output']).includes('literal'));
    expect(last?.['Output']).toBe('{% {"text": "literal ${o}"} %}');
  });
});
