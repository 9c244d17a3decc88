// Shape errors of DSL documents: each says what is expected (and what was probably meant) and points
// at the offending value, not at the mapping around it; all are listed in document order.
import { describe, expect, it } from 'vitest';
import { loadDslDocument, type LoadDslOptions } from '@stepforge/compiler';

/** `[class, message, line, column]` of every error (or, with `warnings`, every warning). */
function diagnostics(text: string, options: LoadDslOptions & { warnings?: boolean } = {}) {
  const r = loadDslDocument(text, { file: 'w.yaml', ...options });
  return (options.warnings ? r.warnings : r.errors).map((e) => [e.code, e.message, e.location?.line, e.location?.column]);
}

const AGENT_STEP = 'steps:\n  s: {call: agent, agent: a}\n';

describe('Function: loadDslDocument (schema errors)', () => {
  it('rejects retry durations it cannot read, with the accepted forms, at the value', () => {
    const forms = 'expected a duration: seconds (2) or a string such as "500ms", "3s" or "1m"';
    const doc = (retry: string) =>
      `document: {dsl: "1.0", name: r, version: "1"}\nagents: {a: {}}\nsteps:\n  s:\n    call: agent\n    agent: a\n    retry:\n${retry}`;
    expect(diagnostics(doc('      initial_backoff: forever\n      max_backoff: -3s\n      jitter: maybe\n'))).toEqual([
      ['schema', `steps.s.retry.initial_backoff: ${forms}, got "forever"`, 8, 24],
      ['schema', `steps.s.retry.max_backoff: ${forms}, got "-3s"`, 9, 20],
      ['schema', 'steps.s.retry.jitter: expected true or false (or FULL / NONE), got "maybe"', 10, 15],
    ]);
    expect(diagnostics(doc('      initial_backoff: -1\n      max_backoff: true\n'))).toEqual([
      ['schema', `steps.s.retry.initial_backoff: ${forms}, got -1`, 8, 24],
      ['schema', `steps.s.retry.max_backoff: ${forms}, got true`, 9, 20],
    ]);
    expect(diagnostics(doc('      initial_backoff: 500ms\n      max_backoff: 2\n')), 'the documented forms').toEqual([]);
    expect(diagnostics(doc('      initial_backoff: "3s"\n      max_backoff: 1m\n      jitter: FULL\n'))).toEqual([]);
  });

  it('type-checks agent settings, at each setting, so tools are never dropped silently', () => {
    const doc = (agent: string) =>
      `document: {dsl: "1.0", name: a, version: "1"}\nagents:\n  writer: ${agent}\nsteps:\n  s: {call: agent, agent: writer}\n`;
    expect(diagnostics(doc('{tools: web-search, model: 5, temperature: hot}'))).toEqual([
      ['schema', 'agents.writer.tools: expected a list of tool names, e.g. [web-search, fs-read], got "web-search"', 3, 19],
      ['schema', 'agents.writer.model: expected a model id such as "bedrock:<model id>", got 5', 3, 38],
      ['schema', 'agents.writer.temperature: expected a number from 0 to 2, got "hot"', 3, 54],
    ]);
    expect(diagnostics(doc('{tools: [web-search, 5], temperature: 3, max_tokens: 0.5}'))).toEqual([
      ['schema', 'agents.writer.tools[1]: expected a tool name (e.g. web-search or mcp.<server>.<tool>), got 5', 3, 32],
      ['schema', 'agents.writer.temperature: expected a number from 0 to 2, got 3', 3, 49],
      ['schema', 'agents.writer.max_tokens: expected a positive whole number of tokens, got 0.5', 3, 64],
    ]);
    expect(diagnostics(doc('5'))).toEqual([
      [
        'schema',
        'agents.writer: expected "" (declared by name), a mapping ({} or {model, instructions, tools…}) or a res://… URI, got 5',
        3,
        11,
      ],
    ]);
    const ok = loadDslDocument(
      doc('{model: "bedrock:x", instructions: Be brief., temperature: 0.2, max_tokens: 500, tools: [web-search], description: d}'),
    );
    expect(ok.errors).toEqual([]);
    expect(ok.graph!.nodes[0]!.tools).toEqual(['web-search']);
    expect(diagnostics(doc('{modle: x}'), { warnings: true })).toEqual([
      ['unknown_field', "unknown field 'modle' in agents.writer; did you mean 'model'?", 3, 12],
    ]);
  });

  it('rejects empty and duplicate roles, at the role', () => {
    const doc = (kind: string) =>
      `document: {dsl: "1.0", name: h, version: "1"}\nagents: {a: {}, b: {}}\nsteps:\n  s:\n    ${kind}\n      - {agent: a, role: x}\n      - {agent: b, role: x}\n      - {agent: b, role: ""}\n`;
    const router = 'call: handoff_router\n    entry_agent: a\n    specialists:';
    expect(diagnostics(doc(router))).toEqual([
      ['schema', 'steps.s.specialists[2].role: a role must not be empty: say what this agent does (e.g. role: billing)', 10, 26],
    ]);
    const r = loadDslDocument(doc(router).replace('role: ""', 'role: y'), { file: 'w.yaml' });
    expect(r.errors.map((e) => [e.code, e.message, e.location?.line, e.location?.column, e.hint])).toEqual([
      [
        'schema',
        "steps.s.specialists[1].role: duplicate role 'x' (first used by specialists[0] at line 8); the router hands off by role, so this specialist could never be reached",
        9,
        26,
        'give each of the specialists its own role',
      ],
    ]);
    // An analyzer collects its analyses per analyst (GraphN's `## <agent>` sections), so roles may repeat.
    const analyzer = 'call: parallel_analyzer\n    aggregator: a\n    analysts:';
    expect(diagnostics(doc(analyzer).replace('role: ""', 'role: y'))).toEqual([]);
    expect(diagnostics(doc(analyzer).replace('agent: b, role: ""', 'agent: b, role: ""'))).toEqual([
      ['schema', 'steps.s.analysts[2].role: a role must not be empty: say what this agent does (e.g. role: billing)', 10, 26],
    ]);
  });

  it("checks trigger names like the deployment does, and a step's output name", () => {
    const base = `document: {dsl: "1.0", name: t, version: "1"}\nagents: {a: {}}\n`;
    expect(diagnostics(`${base}triggers:\n  - name: "bad name!"\n    event_pattern: {source: [x]}\n${AGENT_STEP}`)).toEqual([
      ['schema', "triggers[0].name: 1–40 letters, digits, '-' or '_' (a trigger name becomes part of the EventBridge rule's id)", 4, 11],
    ]);
    // docs/deploy.md: the name is optional and event_bus is a setting.
    expect(
      diagnostics(`${base}triggers:\n  - event_pattern: {source: [x]}\n    event_bus: orders\n${AGENT_STEP}`, { strict: true }),
    ).toEqual([]);
    const step = (output: string) => `${base}steps:\n  s:\n    call: agent\n    agent: a\n    output: ${output}\n`;
    // `output:` names the step's output (GraphN's canvas node id): a name, not a shape.
    const named = "steps.s.output: expected the name of this step's output (its canvas node id), e.g. output: summary";
    expect(diagnostics(step('{type: object}'))).toEqual([['schema', `${named}, got a mapping`, 7, 13]]);
    expect(diagnostics(step('[text]'))).toEqual([['schema', `${named}, got a list`, 7, 13]]);
    expect(diagnostics(step('" "'))).toEqual([['schema', `${named}, got " "`, 7, 13]]);
    for (const ok of ['text', 'summary', 'final_report']) {
      expect(diagnostics(step(ok))).toEqual([]);
      expect(loadDslDocument(step(ok)).graph!.nodes[0]).toMatchObject({ handle: 's', kind: 'agent', output: ok });
    }
  });

  it('locates each unknown step of the output mapping at its own reference', () => {
    const text = `document: {dsl: "1.0", name: o, version: "1"}
agents: {a: {}}
${AGENT_STEP}output:
  fine: \${ steps.s.output }
  two: "\${ steps.nope2.output }"
  deep:
    three: "text \${ steps.nope3.output }"
`;
    expect(diagnostics(text)).toEqual([
      ['unknown_step', "unknown step 'nope2'", 7, 12],
      ['unknown_step', "unknown step 'nope3'", 9, 21],
    ]);
  });

  it('says what is expected instead of "a different value", at the offending sub-value', () => {
    const doc = (top: string, step = '{call: agent, agent: a}') =>
      `document: {dsl: "1.0", name: x, version: "1"}\nagents: {a: {}}\n${top}steps:\n  s: ${step}\n`;
    expect(diagnostics(doc('', '{call: agent, agent: a, after: 5}'))).toEqual([
      ['schema', 'steps.s.after: expected a step name or a list of step names, got 5', 4, 37],
    ]);
    expect(diagnostics(doc('', '{call: agent, agent: a, after: [t, 5]}'))).toEqual([
      ['schema', 'steps.s.after[1]: expected a step name, got 5', 4, 41],
    ]);
    expect(diagnostics('document: {dsl: true, name: x, version: "1"}\nagents: {a: {}}\nsteps:\n  s: {call: agent, agent: a}\n')).toEqual([
      ['schema', 'document.dsl: expected a DSL version such as "1.0", got true', 1, 17],
    ]);
    expect(diagnostics(doc('input:\n  a: {type: strin}\n  b: {type: string, required: maybe}\n  c: strin\n'))).toEqual([
      [
        'schema',
        'input.a.type: expected one of the types string, number, integer, boolean, object, array or any, got "strin"; did you mean \'string\'?',
        4,
        13,
      ],
      ['schema', 'input.b.required: expected true or false, got "maybe"', 5, 31],
      [
        'schema',
        'input.c: expected one of the types string, number, integer, boolean, object, array or any, or a mapping, got "strin"; did you mean \'string\'?',
        6,
        6,
      ],
    ]);
  });

  it('suggests the closest step kind and field name', () => {
    const doc = (step: string) => `document: {dsl: "1.0", name: x, version: "1"}\nagents: {a: {}}\nsteps:\n  s: ${step}\n`;
    expect(diagnostics(doc('{call: agnet, agent: a}'))).toEqual([
      [
        'schema',
        "steps.s.call: unknown step kind call: 'agnet'; did you mean 'agent'? (expected agent, function, mcp_tool, connector, conditional, for_each, while, parallel_analyzer, handoff_router or judge_loop)",
        4,
        13,
      ],
    ]);
    // A step without call: is located at its name; a misspelt call or the old kind: field is named.
    const missing =
      "missing required field 'call' in steps.s (agent, function, mcp_tool, connector, conditional, for_each, while, parallel_analyzer, handoff_router or judge_loop)";
    expect(diagnostics(doc('{cal: agent, agent: a}'))).toEqual([['schema', `${missing}; did you mean 'call' rather than 'cal'?`, 4, 3]]);
    expect(diagnostics(doc('{kind: agent, agent: a}'))).toEqual([
      ['schema', `${missing}; its kind is written with call:, not kind: (call: agent)`, 4, 3],
    ]);
    expect(diagnostics(doc('{agent: a}'))).toEqual([['schema', missing, 4, 3]]);
    expect(diagnostics(doc('{call: agent, agent: a, input_templte: hi, retry: {max_atempts: 2}}'), { warnings: true })).toEqual([
      ['unknown_field', "unknown field 'input_templte' in steps.s; did you mean 'input_template'?", 4, 30],
      ['unknown_field', "unknown field 'max_atempts' in steps.s.retry; did you mean 'max_attempts'?", 4, 57],
    ]);
  });

  it('lists errors in document order', () => {
    const text = `document: {dsl: "1.0", name: x, version: "1"}
agents: {a: {}}
steps:
  one: {call: agent, agent: a, input: "\${ steps.later.output }"}
  two: {call: agent, agent: nobody}
  three: {call: agent, agent: a, after: missing}
output: \${ steps.gone.output }
`;
    expect(diagnostics(text).map(([code, , line]) => [code, line])).toEqual([
      ['unknown_step', 4],
      ['unknown_agent', 5],
      ['unknown_step', 6],
      ['unknown_step', 7],
    ]);
  });
});
