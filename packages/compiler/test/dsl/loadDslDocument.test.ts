import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadDocument, loadDslDocument, workflowJsonSchemaText, type DslForEachStep, type DslStep } from '@stepforge/compiler';

const corpus = (f: string) => readFileSync(fileURLToPath(new URL(`./corpus/${f}`, import.meta.url)), 'utf8');

describe('Function: loadDslDocument', () => {
  it('applies the documented defaults of every step kind', () => {
    const r = loadDslDocument(`document: { dsl: "1.0", name: defaults, version: "1" }
agents: { a: {}, b: {} }
steps:
  c: { call: conditional }
  fe:
    call: for_each
    items: [1, 2]
    do: {inner1: { call: agent, agent: a }}
  fp:
    call: for_each
    items: \${ input.xs }
    parallel: true
    do: {inner2: { call: agent, agent: a }}
  w:
    call: while
    condition: \${ steps.inner3.output.again }
    do: {inner3: { call: agent, agent: a }}
  j: { call: judge_loop, generator: a, evaluator: b, pass_condition: "input.evaluation.ok" }
`);
    expect(r.errors).toEqual([]);
    const [c, fe, fp, w, j] = r.document!.workflow.steps as DslStep[];
    expect(c!.kind === 'conditional' && c.condition.template.whole).toBe(true);
    expect(c!.kind === 'conditional' && c.condition.text).toBe('${ true }');
    const f1 = fe as DslForEachStep;
    expect([f1.as, f1.maxIterations, f1.parallel, f1.maxConcurrency]).toEqual(['item', 50, false, 1]);
    expect('literal' in f1.items && f1.items.literal).toEqual([1, 2]);
    const f2 = fp as DslForEachStep;
    expect([f2.parallel, f2.maxConcurrency]).toEqual([true, 10]);
    expect(w!.kind === 'while' && w.maxIterations).toBe(10);
    expect(w!.kind === 'while' && w.do.steps[0]!.parent).toBe('w');
    expect(j!.kind === 'judge_loop' && j.maxIterations).toBe(5);
    expect(j!.kind === 'judge_loop' && j.passCondition.text).toBe('${ input.evaluation.ok }');
  });

  it('keeps source locations, templates and reads on every step', () => {
    const r = loadDslDocument(corpus('v14-nested-outer-reference.yaml'), { file: 'v14.yaml' });
    const each = r.document!.workflow.steps[1] as DslForEachStep;
    // A step is located at its name, the key of its definition.
    expect(each.location).toEqual({ file: 'v14.yaml', line: 8, column: 3, length: 4 });
    expect(each.dependencies).toEqual(['plan']);
    const doTask = each.do.steps[0]!;
    expect(doTask.inputTemplate?.reads).toEqual(['plan']);
    expect(doTask.inputTemplate?.templates[0]?.location.line).toBe(15);
    expect(each.do.steps[1]!.dependencies).toEqual(['do_task']);
    expect(each.do.edges).toEqual([[0, 1]]);
    expect(r.document!.dependencies).toEqual([
      { from: 'plan', to: 'each', via: 'reference' },
      { from: 'do_task', to: 'check_task', via: 'after' },
    ]);
  });

  it('keeps the retry policy as authored', () => {
    const r = loadDslDocument(corpus('v21-retry.yaml'));
    expect(r.document!.workflow.steps[0]!.retry).toEqual({ max_attempts: 4, initial_backoff: '2s', max_backoff: '1m', jitter: true });
  });

  it('resolves secrets to $secret:<id> bindings, never values', () => {
    const r = loadDslDocument(corpus('v20-secrets-list.yaml'));
    const step = r.document!.workflow.steps[0]!;
    expect(step.secrets.map((s) => [s.name, s.id])).toEqual([
      ['api_key', 'api/key'],
      ['other/token', 'other/token'],
    ]);
    expect(r.document!.secrets.api_key?.id).toBe('api/key');
  });

  it('warns about unknown fields with their location, and fails on them with strict', () => {
    const text = corpus('v18-unknown-field-warning.yaml');
    const loose = loadDslDocument(text, { file: 'w.yaml' });
    expect(loose.warnings).toEqual([
      {
        severity: 'warning',
        code: 'unknown_field',
        message: "unknown field 'retries' in steps.one",
        location: { file: 'w.yaml', line: 8, column: 5, length: 7 },
      },
    ]);
    expect(loose.document).toBeDefined();
    const strict = loadDslDocument(text, { file: 'w.yaml', strict: true });
    expect(strict.errors.map((e) => e.code)).toEqual(['unknown_field']);
    expect(strict.document).toBeUndefined();
  });

  it('with strict, reports an unknown field and the errors of the rest of the document in one pass', () => {
    const text = [
      'document: {dsl: "1.0", name: s, version: "0.1.0"}',
      'agents: {W: ""}',
      'input: {a: string}',
      'steps:',
      '  s: {call: agent, agent: W, input_template: "${input.b}", colour: red}',
      '  t: {call: agent, agent: Q}',
      '',
    ].join('\n');
    const strict = loadDslDocument(text, { file: 's.yaml', strict: true });
    expect(strict.errors.map((e) => [e.code, e.message, e.location?.line, e.location?.column])).toEqual([
      ['unknown_input', "'input.b' is not a declared input field", 5, 49],
      ['unknown_field', "unknown field 'colour' in steps.s", 5, 60],
      ['unknown_agent', "unknown agent 'Q'", 6, 27],
    ]);
    expect(strict.document).toBeUndefined();
  });

  it('reports a type error in one step and the reference, agent and cycle errors of the others in one pass', () => {
    const text = [
      'document: {dsl: "1.0", name: s, version: "0.1.0"}',
      'agents: {W: ""}',
      'steps:',
      '  a: {call: agent, agent: W, retry: {max_attempts: many}, output: first}',
      '  b: {call: agent, agent: W, input_template: "${ steps.nope.output } ${ steps.first.output }", after: a}',
      '  c: {call: agent, agent: W, input_template: "${ steps.d.output }"}',
      '  d: {call: agent, agent: Q, input_template: "${ steps.c.output }"}',
      '  loop:',
      '    call: while',
      '    condition: true',
      '    do:',
      '      x: {call: function}',
      '      y: {call: agent, agent: W, input_template: "${ steps.gone.output }", after: x}',
      '',
    ].join('\n');
    for (const strict of [false, true]) {
      const r = loadDslDocument(text, { file: 's.yaml', strict });
      expect(r.errors.map((e) => [e.code, e.message, e.location?.line, e.location?.column])).toEqual([
        ['schema', 'steps.a.retry.max_attempts: expected a number, got "many"', 4, 52],
        ['unknown_step', "unknown step 'nope'", 5, 50],
        ['cycle', 'dependency cycle: c → d → c', 6, 3],
        ['unknown_agent', "unknown agent 'Q'", 7, 27],
        ['schema', "missing required field 'function' in steps.loop.do.x", 12, 7],
        ['unknown_step', "unknown step 'gone'", 13, 54],
      ]);
      expect(r.document).toBeUndefined();
    }
    // An error in a declaration still stops there: without it, every use would be an error too.
    const declaration = loadDslDocument(text.replace('agents: {W: ""}', 'agents: {W: 5}'), { file: 's.yaml' });
    expect(declaration.errors.map((e) => e.code)).toEqual(['schema', 'schema', 'schema']);
  });

  it('reads DSL 1.x documents, and warns about another version (an error with strict)', () => {
    const doc = (dsl: string) =>
      `document: { dsl: ${dsl}, name: v, version: "1" }\nagents: { a: {} }\nsteps:\n  s: { call: agent, agent: a }\n`;
    for (const v of ['"1.0"', '"1"', '"1.0.0"', '1.0', '1']) {
      const r = loadDslDocument(doc(v));
      expect([v, r.errors, r.warnings]).toEqual([v, [], []]);
    }
    const message = 'document.dsl is \'2.0\', but this Stepforge reads DSL 1.x documents (e.g. "1.0"); it is read as 1.x';
    const loose = loadDslDocument(doc('"2.0"'), { file: 'v.yaml' });
    expect(loose.warnings).toEqual([
      { severity: 'warning', code: 'unsupported_dsl_version', message, location: { file: 'v.yaml', line: 1, column: 18, length: 5 } },
    ]);
    expect(loose.document?.metadata.dsl).toBe('2.0');
    const strict = loadDslDocument(doc('"2.0"'), { strict: true });
    expect(strict.errors.map((e) => [e.code, e.message])).toEqual([['unsupported_dsl_version', message]]);
  });

  it('warns about a document without version, at document, and keeps it a warning with strict', () => {
    const text = 'document:\n  dsl: "1.0"\n  name: v\nagents: { a: {} }\nsteps:\n  s: { call: agent, agent: a }\n';
    const warning = {
      severity: 'warning',
      code: 'missing_version',
      message: 'document has no version; GraphN requires document.version (e.g. version: "0.1.0")',
      location: { file: 'v.yaml', line: 2, column: 3, length: expect.any(Number) },
    };
    for (const strict of [false, true]) {
      const r = loadDslDocument(text, { file: 'v.yaml', strict });
      expect([strict, r.errors, r.warnings]).toEqual([strict, [], [warning]]);
      expect(r.document?.name).toBe('v');
    }
    expect(loadDslDocument(text.replace('name: v\n', 'name: v\n  version: "0.1.0"\n')).warnings).toEqual([]);
  });

  it("says what a field should be and what it got where the schema gives zod's default wording", () => {
    const messages = (text: string) => loadDslDocument(text).errors.map((e) => e.message);
    expect(messages('document: { dsl: "1.0", name: x, version: "1" }\nsteps: 7\n')).toEqual([
      'steps: expected a mapping of step name to step definition (name: {call: …}), got 7',
    ]);
    expect(messages('document: "x"\nagents: { a: {} }\nsteps:\n  s: { call: agent, agent: a }\n')).toEqual([
      'document: expected a mapping, got "x"',
    ]);
    expect(
      messages('document: { dsl: "1.0", name: x, version: "1" }\nagents: { a: {} }\nsteps:\n  5: { call: agent, agent: a }\n'),
    ).toEqual(["steps: step '5': a step name must start with a letter or _ and contain only letters, digits, _ and -"]);
    // The schema's own sentences stay as they are.
    expect(messages('document: { dsl: "1.0", name: x, version: "1" }\nsteps: {}\n')).toEqual(['steps: a workflow needs at least one step']);
    expect(messages('document: { dsl: "1.0", name: x, version: "1" }\nsteps: []\n')).toEqual([
      'steps is a list (- name: … kind: …), but steps are written as a mapping of step name to step definition, with call: naming the kind',
    ]);
  });

  it('points expression errors into plain, quoted, folded and literal scalars', () => {
    const base = 'document: { dsl: "1.0", name: x, version: "1" }\nagents: { a: {} }\nsteps:\n  s:\n    call: agent\n    agent: a\n';
    const at = (field: string) => {
      const r = loadDslDocument(base + field);
      expect(r.errors.map((e) => e.code)).toEqual(['expression']);
      return [r.errors[0]!.location!.line, r.errors[0]!.location!.column];
    };
    expect(at('    input_template: go ${ a ? }\n')).toEqual([7, 29]);
    expect(at("    input_template: 'it''s ${ a ? }'\n")).toEqual([7, 33]);
    expect(at('    input_template: "\\"q\\" ${ a ? }"\n')).toEqual([7, 33]);
    expect(at('    input_template: >\n      one\n      two ${ a ? }\n')).toEqual([9, 16]);
    expect(at('    input_template: |-\n      one\n        two ${ a ? }\n')).toEqual([9, 18]);
    expect(at('    input:\n      deep: [1, { x: "${ ?? }" }]\n')).toEqual([8, 26]);
  });

  it('warns about input references that are neither declared nor bound by a loop', () => {
    const r = loadDslDocument(corpus('v06-for-each.yaml').replace('Read ${ input.url }', 'Read ${ input.url } ${ input.uri }'));
    expect(r.warnings.map((w) => [w.code, w.message, w.location?.line])).toEqual([
      ['unknown_input', "'input.uri' is not a declared input field nor bound by an enclosing loop (url)", 15],
    ]);
  });

  it('leaves the graph view out with graph: false (a compile reads none), on both paths', () => {
    const text = corpus('v02-sequence-by-reference.yaml');
    const full = loadDocument(text, { file: 'v02.yaml' });
    const bare = loadDocument(text, { file: 'v02.yaml', graph: false });
    expect(bare.graph).toBeUndefined();
    expect(bare.document).toEqual(full.document);
    expect(full.graph?.edges).toEqual([[0, 1]]);
    // A warning sends the document to the precise path, which leaves it out too.
    const warned = loadDslDocument(text.replace('steps:', 'extra_field: 1\nsteps:'), { graph: false });
    expect(warned.warnings.map((w) => w.code)).toContain('unknown_field');
    expect(warned.document).toBeDefined();
    expect(warned.graph).toBeUndefined();
  });

  it('is what loadDocument uses for documents with steps:', () => {
    const r = loadDocument(corpus('v02-sequence-by-reference.yaml'), { file: 'v02.yaml' });
    expect(r.format).toBe('dsl');
    expect(r.graph?.edges).toEqual([[0, 1]]);
    const bad = loadDocument(corpus('e09-unknown-agent.yaml'), { file: 'e09.yaml' });
    expect(bad.errors.map((e) => e.toJSON())).toEqual([
      {
        class: 'unknown_agent',
        message: "unknown agent 'reseacher'",
        line: 6,
        column: 12,
        file: 'e09.yaml',
        hint: "did you mean 'researcher'?",
      },
    ]);
  });

  it('handles long dependency chains and names long cycles without recursion limits', () => {
    const chain = (n: number, closeCycle: boolean) => {
      const lines = ['document: { dsl: "1.0", name: long, version: "1" }', 'functions: { f: {} }', 'steps:'];
      for (let i = 0; i < n; i++) {
        const dep = i > 0 ? i - 1 : closeCycle ? n - 1 : undefined;
        lines.push(`  s${i}: { call: function, function: f${dep !== undefined ? `, input: "\${ steps.s${dep}.output }"` : ''} }`);
      }
      return lines.join('\n');
    };
    const ok = loadDslDocument(chain(1500, false));
    expect(ok.errors).toEqual([]);
    expect(ok.document!.workflow.order.length).toBe(1500);
    expect(ok.document!.workflow.steps[ok.document!.workflow.resultStep!]!.name).toBe('s1499');
    const bad = loadDslDocument(chain(1500, true));
    expect(bad.errors.map((e) => [e.code, e.location?.line])).toEqual([['cycle', 4]]);
    expect((bad.errors[0]!.details?.path as string[]).length).toBe(1501);
    expect(bad.errors[0]!.message.startsWith('dependency cycle: s0 → s1 → s2 → ')).toBe(true);
  });

  it('rejects a cycle inside a loop body and names it', () => {
    const r = loadDslDocument(`document: { dsl: "1.0", name: x, version: "1" }
agents: { a: {} }
steps:
  loop:
    call: while
    condition: false
    do:
      p: { call: agent, agent: a, after: q }
      q: { call: agent, agent: a, input: "\${ steps.p.output }" }
`);
    expect(r.errors.map((e) => [e.code, e.message, e.location?.line, e.location?.column])).toEqual([
      ['cycle', 'dependency cycle: p → q → p', 8, 7],
    ]);
  });

  it("reads a later sibling on a while body's cycle from the previous iteration: the reader runs first, with no dependency", () => {
    const doc = (kind: string) => `document: { dsl: "1.0", name: x, version: "1" }
agents: { a: {} }
steps:
  loop:
    call: ${kind}
    ${kind === 'while' ? 'condition: false' : 'items: [1]'}
    do:
      draft: { call: agent, agent: a, input_template: "last review: \${ steps.review.output }" }
      review: { call: agent, agent: a, input_template: "\${ steps.draft.output }" }
      other: { call: agent, agent: a, input_template: "\${ steps.late.output }" }
      late: { call: agent, agent: a }
`;
    const r = loadDslDocument(doc('while'));
    expect(r.errors).toEqual([]);
    const loop = r.document!.workflow.steps[0] as DslStep & { carried?: string[]; do: { steps: DslStep[]; edges: [number, number][] } };
    expect(loop.carried).toEqual(['review']);
    // draft → review (draft runs first, review reads it); late → other stays a dependency (no cycle).
    expect(loop.do.edges).toEqual([
      [0, 1],
      [3, 2],
    ]);
    expect(loop.do.steps.map((s) => [s.name, s.dependencies])).toEqual([
      ['draft', []],
      ['review', ['draft']],
      ['other', ['late']],
      ['late', []],
    ]);
    // Each iteration of a for_each is its own: there the same references are a cycle.
    expect(loadDslDocument(doc('for_each')).errors.map((e) => [e.code, e.message])).toEqual([
      ['cycle', 'dependency cycle: draft → review → draft'],
    ]);
  });

  it("lets a while's condition and body, and a judge_loop's pass_condition, read the loop's own output (no dependency)", () => {
    const r = loadDslDocument(`document: { dsl: "1.0", name: x, version: "1" }
agents: { a: {}, b: {} }
steps:
  loop:
    call: while
    condition: "\${ steps.loop.output.more == true }"
    do:
      p: { call: agent, agent: a, input_template: "again: \${ steps.loop.output }" }
      inner:
        call: for_each
        items: [1, 2]
        do:
          q: { call: agent, agent: a, input_template: "\${ steps.loop.output }" }
  judge:
    call: judge_loop
    generator: a
    evaluator: b
    pass_condition: "\${ steps.judge.output.ok == true }"
`);
    expect(r.errors).toEqual([]);
    expect(r.document!.dependencies).toEqual([]);
    expect(r.document!.workflow.edges).toEqual([]);
  });

  it('still refuses a loop whose own input or guard reads its output, at the reference', () => {
    const r = loadDslDocument(`document: { dsl: "1.0", name: x, version: "1" }
agents: { a: {}, b: {} }
steps:
  loop:
    call: while
    condition: true
    input: "\${ steps.loop.output }"
    do:
      p: { call: agent, agent: a }
  judge:
    call: judge_loop
    generator: a
    evaluator: b
    when: "\${ steps.judge.output }"
`);
    expect(r.errors.map((e) => [e.code, e.message, e.location?.line, e.location?.column])).toEqual([
      ['cycle', "step 'loop' depends on itself", 7, 16],
      ['cycle', "step 'judge' depends on itself", 14, 15],
    ]);
  });

  it('suggests the closest declared name', () => {
    const r = loadDslDocument(corpus('e09-unknown-agent.yaml'));
    expect(r.errors[0]!.hint).toBe("did you mean 'researcher'?");
  });
});

describe('Function: workflowJsonSchemaText', () => {
  it('matches the checked-in schemas/workflow.schema.json (regenerate: npx tsx schemas/generate.ts)', () => {
    const file = readFileSync(fileURLToPath(new URL('../../../../schemas/workflow.schema.json', import.meta.url)), 'utf8');
    expect(file).toBe(workflowJsonSchemaText());
  });

  it('describes every step kind and the top-level sections', () => {
    const schema = JSON.parse(workflowJsonSchemaText()) as { properties: Record<string, unknown> };
    expect(Object.keys(schema.properties)).toEqual([
      'document',
      'agents',
      'functions',
      'mcp_servers',
      'secrets',
      'input',
      'chat_hints',
      'steps',
      'output',
      'express',
      'triggers',
    ]);
    const text = workflowJsonSchemaText();
    for (const k of [
      'agent',
      'function',
      'mcp_tool',
      'connector',
      'conditional',
      'for_each',
      'while',
      'parallel_analyzer',
      'handoff_router',
      'judge_loop',
    ]) {
      expect(text).toContain(`"const": "${k}"`);
    }
  });
});

describe('Function: loadDslDocument (deployment settings)', () => {
  it('accepts express and triggers under --strict, and rejects a malformed trigger with its location', () => {
    const base = 'document: {dsl: "1.0", name: t, version: "1"}\nagents: {a: {}}\nsteps:\n  s: {call: agent, agent: a}\n';
    const ok = loadDslDocument(base + 'express: true\ntriggers:\n  - name: go\n    event_pattern: {source: ["x"]}\n', { strict: true });
    expect(ok.errors).toEqual([]);
    const bad = loadDslDocument(base + 'triggers:\n  - name: go\n    pattern: {source: ["x"]}\n', { strict: true });
    // In document order: the trigger missing its event_pattern (line 6), then the unknown field (line 7).
    expect(bad.errors.map((e) => [e.code, e.message, e.location?.line, e.location?.column])).toEqual([
      ['schema', "missing required field 'event_pattern' in triggers[0]", 6, 5],
      ['unknown_field', "unknown field 'pattern' in triggers[0]", 7, 5],
    ]);
    // Without strict too: a misspelt trigger field would deploy another rule than the one meant.
    const lax = loadDslDocument(base + 'triggers:\n  - event_pattern: {source: ["x"]}\n    schedule: daily\n');
    expect(lax.errors.map((e) => [e.code, e.message, e.location?.line, e.location?.column])).toEqual([
      ['unknown_field', "unknown field 'schedule' in triggers[0]", 7, 5],
    ]);
  });
});
