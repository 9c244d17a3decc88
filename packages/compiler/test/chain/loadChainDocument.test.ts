import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseDocument, type Scalar } from 'yaml';
import {
  DEFAULT_TIERS,
  canonicalJson,
  compileDocument,
  didYouMean,
  findCycle,
  formatChainNode,
  loadChainDocument,
  loadDocument,
  loadDslDocument,
  parseChain,
  stepIdentity,
} from '../../src/index.js';
import { scalarOffsets } from '../../src/source/scalarOffsets.js';

const DOC = `name: research
input:
  topic: string
  depth: {type: integer, default: 2}
chain: "plan@web-search@fs-list > [draft & critique] > judge"
tasks:
  plan: {kind: model, model: "bedrock:anthropic.claude-3-5-haiku", prompt: "Plan research on \${input.topic}", max_turns: 4}
  draft: {kind: model, prompt: "Write a draft"}
  critique: {kind: tool, tool: lint, args: {strict: true}}
  judge: {kind: pure, expr: "$.draft"}
`;

describe('Function: loadChainDocument', () => {
  it('returns the checked document: steps in first-appearance order, edges, budgets, identities, input schema', () => {
    const r = loadChainDocument(DOC, { file: 'r.chain.yaml' });
    expect(r.errors).toEqual([]);
    const d = r.document!;
    expect(d.name).toBe('research');
    expect(d.tier).toBe('standard');
    expect(d.steps.map((s) => [s.index, s.handle, s.kind, s.tools])).toEqual([
      [0, 'plan', 'model', ['web-search', 'fs-list']],
      [1, 'draft', 'model', []],
      [2, 'critique', 'tool', []],
      [3, 'judge', 'pure', []],
    ]);
    expect(d.edges).toEqual([
      [0, 1],
      [0, 2],
      [1, 3],
      [2, 3],
    ]);
    expect(d.steps[0]!.budget).toEqual({ maxTurns: 4, maxToolCalls: 20 });
    expect(d.steps[1]!.budget).toBeUndefined();
    expect(d.steps[0]!.location).toEqual({ file: 'r.chain.yaml', line: 5, column: 9, length: 4 });
    expect(d.steps[2]!.taskLocation).toEqual({ file: 'r.chain.yaml', line: 9, column: 3, length: 8 });
    expect(d.steps[0]!.identity).toMatch(/^[0-9a-f]{64}$/);
    expect(d.input.fields.map((f) => [f.name, f.type, f.required, f.default])).toEqual([
      ['topic', 'string', true, undefined],
      ['depth', 'integer', false, 2],
    ]);
    expect(r.graph!.nodes[2]).toEqual({ handle: 'critique', kind: 'tool', tools: [] });
  });

  it('gives a step the same identity however the document is formatted', () => {
    const a = loadChainDocument(DOC).document!;
    const reformatted = `tasks:
  judge:
    expr: "$.draft"
    kind: pure
  critique: {args: {strict: true}, tool: lint, kind: tool}
  draft: {prompt: "Write a draft", kind: model}
  plan:
    max_turns: 4
    prompt: "Plan research on \${input.topic}"
    kind: model
    model: "bedrock:anthropic.claude-3-5-haiku"
chain: >-
  plan @ web-search @fs-list >
  [ draft & critique ] > judge
`;
    const b = loadChainDocument(reformatted).document!;
    expect(b.steps.map((s) => s.identity)).toEqual(a.steps.map((s) => s.identity));
  });

  it('changes the identity when the tool set or the configuration changes', () => {
    const base = stepIdentity('model', { prompt: 'p' }, ['x']);
    expect(stepIdentity('model', { prompt: 'p' }, ['x', 'y'])).not.toBe(base);
    expect(stepIdentity('model', { prompt: 'q' }, ['x'])).not.toBe(base);
    expect(stepIdentity('tool', { prompt: 'p' }, ['x'])).not.toBe(base);
    expect(stepIdentity('model', { prompt: 'p' }, ['x'])).toBe(base);
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
  });

  it('accepts a project tier table that extends the defaults', () => {
    const doc = 'tier: solo\nchain: a > b\ntasks:\n  a: {kind: model, prompt: p, max_turns: 40}\n  b: {kind: model, prompt: q}\n';
    expect(loadChainDocument(doc).errors.map((e) => [e.code, e.message])).toEqual([
      ['tier_limit', `unknown tier "solo" (known tiers: standard)`],
    ]);
    const tiers = { solo: { name: 'solo', minAgenticSteps: 0, maxAgenticSteps: 0, maxTurns: 64, maxToolCalls: 0 } };
    const r = loadChainDocument(doc, { tiers });
    expect(r.errors).toEqual([]);
    expect(r.document!.tier).toBe('solo');
    expect(DEFAULT_TIERS.standard).toEqual({ name: 'standard', minAgenticSteps: 1, maxAgenticSteps: 8, maxTurns: 16, maxToolCalls: 20 });
  });

  it('reports YAML syntax errors as invalid_document with their location', () => {
    const r = loadChainDocument('chain: [a\ntasks: {}\n', { file: 'y.yaml' });
    expect(r.errors[0]!.code).toBe('invalid_document');
    expect(r.errors[0]!.message).toMatch(/^invalid YAML: /);
    expect(r.errors[0]!.location!.file).toBe('y.yaml');
  });

  it('underlines the whole offending value and suggests a model step for the tier fix', () => {
    const r = loadChainDocument('chain: fetch > write@x\ntasks:\n  fetch: {kind: tool, tool: get}\n  write: {kind: modle, prompt: w}\n');
    // Only the misspelt kind is reported (no agentic_non_model for a kind that does not exist).
    expect(r.errors.map((e) => [e.code, e.location?.line, e.location?.column, e.location?.length])).toEqual([['invalid_task', 4, 17, 5]]);
    const t = loadChainDocument('chain: fetch > write\ntasks:\n  fetch: {kind: tool, tool: get}\n  write: {kind: model, prompt: w}\n');
    expect(t.errors.map((e) => e.message)).toEqual([
      "the standard tier needs at least 1 model step(s) granted a tool, found 0; grant one with '@', e.g. 'write@web-search'",
    ]);
    expect(t.errors[0]!.toString()).toBe(
      "error[tier_limit] <input>:1:8: the standard tier needs at least 1 model step(s) granted a tool, found 0; grant one with '@', e.g. 'write@web-search'\n  |\n1 | chain: fetch > write\n  |        ^",
    );
  });

  it('reports a duplicated task handle at its second definition', () => {
    const r = loadChainDocument('chain: a@x\ntasks:\n  a: {kind: model, prompt: p}\n  a: {kind: model, prompt: q}\n');
    expect(r.errors.map((e) => [e.code, e.message, e.location?.line, e.location?.column])).toEqual([
      ['invalid_document', "invalid YAML: Map keys must be unique; 'a' appears twice", 4, 3],
    ]);
  });

  it('reports a missing chain, a non-string chain and a missing task map', () => {
    expect(loadChainDocument('tasks: {}\n').errors.map((e) => e.message)).toEqual([
      `missing 'chain:' (the chain expression, e.g. "plan@web-search > [draft & critique] > judge")`,
    ]);
    expect(loadChainDocument('chain: [a, b]\ntasks: {}\n').errors.map((e) => [e.code, e.location?.column])).toEqual([
      ['invalid_document', 8],
    ]);
    expect(loadChainDocument('chain: a\n').errors.map((e) => e.message)).toEqual([
      "missing 'tasks:' (a mapping from each handle to its task)",
    ]);
  });

  it('warns about unknown top-level fields, and fails on them with strict', () => {
    const doc = 'chain: a@x\ntsks: {}\ntasks:\n  a: {kind: model, prompt: p}\n';
    const r = loadChainDocument(doc);
    expect(r.errors).toEqual([]);
    expect(r.warnings.map((w) => [w.code, w.message, w.location?.line])).toEqual([
      [
        'unknown_field',
        "unknown top-level field 'tsks'; did you mean 'tasks'? (expected name, description, chain, tasks, tier, input, seed, express, triggers, context_bundles)",
        2,
      ],
    ]);
    expect(loadChainDocument(doc, { strict: true }).errors.map((e) => e.code)).toEqual(['invalid_document']);
  });

  it('checks prompt templates and pure JSONata, pointing inside the string', () => {
    const doc = 'chain: a@x > b\ntasks:\n  a: {kind: model, prompt: "Hi ${input."}\n  b: {kind: pure, expr: "$sum(1,"}\n';
    const r = loadChainDocument(doc);
    expect(r.errors.map((e) => [e.code, e.location?.line, e.message.split(':')[0]])).toEqual([
      ['invalid_task', 3, 'tasks.a.prompt'],
      ['invalid_task', 4, 'tasks.b.expr'],
    ]);
    expect(r.errors[1]!.message).toMatch(/^tasks\.b\.expr: invalid JSONata: /);
  });

  it('reports the input schema field that is wrong', () => {
    const r = loadChainDocument('input:\n  topic: strng\nchain: a@x\ntasks:\n  a: {kind: model, prompt: p}\n');
    expect(r.errors.map((e) => [e.code, e.location?.line, e.location?.column])).toEqual([['invalid_document', 2, 10]]);
    expect(r.errors[0]!.message).toBe(
      `input.topic: expected a type (string, number, integer, boolean, object, array, any) or {type, required, description, default}, got "strng"; did you mean 'string'?`,
    );
  });

  it('reports each wrong field of an input declaration at its own node', () => {
    const doc =
      'input:\n  m: {type: number, requried: false}\n  k: {required: "no"}\n  s: 5\nchain: a@x\ntasks:\n  a: {kind: model, prompt: p}\n';
    expect(loadChainDocument(doc).errors.map((e) => [e.code, e.location?.line, e.location?.column, e.location?.length, e.message])).toEqual(
      [
        [
          'invalid_document',
          2,
          21,
          8,
          "input.m.requried: unknown field; did you mean 'required'? (an input declaration has type, required, description, default)",
        ],
        ['invalid_document', 3, 17, 4, 'input.k.required: expected a boolean, got "no"'],
        [
          'invalid_document',
          4,
          6,
          1,
          'input.s: expected a type (string, number, integer, boolean, object, array, any) or {type, required, description, default}, got 5',
        ],
      ],
    );
  });

  it("refuses an input default of the wrong type with the DSL's message, at the default", () => {
    const input = 'input:\n  n: {type: integer, default: "x"}\n  o:\n    type: object\n    default: [1]\n  ok: {type: any, default: 3}\n';
    const chain = loadChainDocument(`${input}chain: a@x\ntasks:\n  a: {kind: model, prompt: p}\n`, { file: 'c.chain.yaml' });
    expect(chain.errors.map((e) => [e.code, e.location?.line, e.location?.column, e.location?.length, e.message])).toEqual([
      ['invalid_document', 2, 31, 3, 'input.n: the default does not match the declared type integer'],
      ['invalid_document', 5, 14, 1, 'input.o: the default does not match the declared type object'],
    ]);
    // The input schema is shared: the DSL front-end refuses the same defaults, at the same columns.
    const dsl = loadDslDocument(`document: {dsl: "1.0", name: g}\nagents: {w: {}}\n${input}steps:\n  a: {call: agent, agent: w}\n`, {
      file: 'g.yaml',
    });
    expect(dsl.errors.map((e) => [e.message, e.location?.column])).toEqual(chain.errors.map((e) => [e.message, e.location?.column]));
  });

  it('reports an unknown field in any nested mapping of a task at its key', () => {
    const doc =
      'chain: a@x > b\ntasks:\n  a:\n    kind: model\n    prompt: p\n    retry:\n      intervl_seconds: 3\n      errors: [""]\n  b: {kind: tool, tool: t, retry: {max_attempts: 2, foo: 1}, args: 5}\n';
    expect(loadChainDocument(doc).errors.map((e) => [e.code, e.location?.line, e.location?.column, e.location?.length, e.message])).toEqual(
      [
        [
          'invalid_task',
          7,
          7,
          15,
          "tasks.a.retry.intervl_seconds: unknown field; did you mean 'interval_seconds'? (a retry policy has max_attempts, interval_seconds, backoff_rate, max_delay_seconds, jitter, errors)",
        ],
        ['invalid_task', 8, 16, 2, 'tasks.a.retry.errors[0]: expected at least 1 character(s), got ""'],
        [
          'invalid_task',
          9,
          53,
          3,
          'tasks.b.retry.foo: unknown field (a retry policy has max_attempts, interval_seconds, backoff_rate, max_delay_seconds, jitter, errors)',
        ],
        ['invalid_task', 9, 68, 1, 'tasks.b.args: expected a mapping, got 5'],
      ],
    );
  });

  it("infers a task's left-out kind from its fields, as Kortecx does, and says so when a field does not fit", () => {
    const doc = 'chain: p@web-search > t > q\ntasks:\n  p: {prompt: "Plan."}\n  t: {tool_contract: {fs-list: "1"}}\n  q: {}\n';
    const r = loadChainDocument(doc, { file: 'x.chain.yaml' });
    expect(r.errors.map(String)).toEqual([]);
    expect(r.document?.steps.map((s) => [s.handle, s.kind, s.tools])).toEqual([
      ['p', 'model', ['web-search']],
      ['t', 'tool', []],
      ['q', 'pure', []],
    ]);
    // The identity is the one the same task has with its kind written out.
    const written = loadChainDocument(doc.replace('{prompt:', '{kind: model, prompt:'), { file: 'x.chain.yaml' });
    expect(written.document?.steps[0]?.identity).toBe(r.document?.steps[0]?.identity);
    const misfit = loadChainDocument('chain: p@web-search > q\ntasks:\n  p: {prompt: "Plan."}\n  q: {args: {path: .}}\n');
    expect(misfit.errors.map((e) => [e.code, e.location?.line, e.location?.column, e.message])).toEqual([
      ['invalid_task', 4, 7, 'tasks.q.args: unknown field (a task without kind:, read as pure, has kind, expr, params, body_signature_id)'],
    ]);
  });

  it('refuses a file name that cannot name the workflow when there is no name:, and suggests one', () => {
    const doc = 'chain: a@x\ntasks:\n  a: {kind: model, prompt: p}\n';
    const r = loadChainDocument(doc, { file: 'flows/my file!.chain.yaml' });
    expect(r.errors.map((e) => [e.code, e.location?.file, e.location?.line, e.location?.column, e.message])).toEqual([
      [
        'invalid_document',
        'flows/my file!.chain.yaml',
        1,
        1,
        "the file name cannot be used as a workflow name: 'my file!' is not 1–80 characters of letters, digits, '-' and '_' (without `name:`, the workflow is named after its file); add `name: my-file`",
      ],
    ]);
    const long = loadChainDocument(doc, { file: `${'x'.repeat(90)}.chain.yaml` }).errors[0]!;
    expect([long.code, long.location?.line, long.location?.column, long.message.endsWith(`add \`name: ${'x'.repeat(80)}\``)]).toEqual([
      'invalid_document',
      1,
      1,
      true,
    ]);
    // compile refuses it too, before writing anything.
    expect(() => compileDocument(doc, { file: 'my file!.chain.yaml' })).toThrowError(
      expect.objectContaining({ code: 'invalid_document', location: expect.objectContaining({ line: 1, column: 1 }) }),
    );
    // An explicit name, a valid file name, no file or a `<…>` pseudo-source are fine.
    for (const [text, file] of [
      [`name: ok\n${doc}`, 'my file!.chain.yaml'],
      [doc, 'dir.v2/research_2-b.chain.yaml'],
      [doc, undefined],
      [doc, '<new swarm>'],
    ] as const) {
      expect([file, loadChainDocument(text, file === undefined ? {} : { file }).errors]).toEqual([file, []]);
    }
  });

  it('checks the triggers: entries the CDK app deploys, each problem at its node', () => {
    const doc =
      'triggers:\n  - name: "a b"\n    event_pattern: {source: [x]}\n  - {event_pattern: {}}\n  - 7\n  - event_pattern: {source: [x]}\n    evnt_bus: orders\nchain: a@x\ntasks:\n  a: {kind: model, prompt: p}\n';
    expect(loadChainDocument(doc).errors.map((e) => [e.code, e.location?.line, e.location?.column, e.message])).toEqual([
      [
        'invalid_document',
        2,
        11,
        "triggers[0].name: expected 1–40 letters, digits, '-' or '_' (a trigger name becomes part of the EventBridge rule's id), got \"a b\"",
      ],
      ['invalid_document', 4, 6, 'triggers[1].event_pattern: expected a non-empty mapping (an EventBridge event pattern)'],
      ['invalid_document', 5, 5, 'triggers[2]: expected a mapping, got 7'],
      [
        'invalid_document',
        7,
        5,
        "triggers[3].evnt_bus: unknown field; did you mean 'event_bus'? (a trigger has name, description, event_pattern, event_bus)",
      ],
    ]);
  });

  it('reports every unknown handle once, in order', () => {
    const r = loadChainDocument('chain: x > a@t > y > x\ntasks:\n  a: {kind: model, prompt: p}\n', { level: 'topology' });
    expect(r.errors.map((e) => e.message)).toEqual([
      "unknown task handle 'x'; define it under tasks:",
      "unknown task handle 'y'; define it under tasks:",
      'cycle: x > a > y > x',
    ]);
  });

  describe('complex keys', () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it('reports a key that is not a plain string, without a process warning', () => {
      const emitWarning = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
      const doc = '? [x]\n: 1\nchain: a@x\ntasks:\n  a: {kind: model, prompt: p, {b: 1}: 2}\n';
      const r = loadDocument(doc, { file: 'k.chain.yaml' });
      const message = (what: string) =>
        `mapping keys must be plain strings (field names and task handles), but this key is ${what}; write it as plain text (quoted if it starts with '[', '{', '?', '*' or '&')`;
      expect(r.errors.map((e) => [e.code, e.location?.line, e.location?.column, e.location?.length, e.message])).toEqual([
        ['invalid_document', 1, 3, 3, message('a list')],
        ['invalid_document', 5, 31, 6, message('a mapping')],
      ]);
      expect(emitWarning).not.toHaveBeenCalled();
      expect(warn).not.toHaveBeenCalled();
    });
  });
});

describe('Function: loadDocument', () => {
  it('sends a mapping with chain: to the chain front-end', () => {
    const r = loadDocument(DOC);
    expect(r.format).toBe('chain');
    expect(r.errors).toEqual([]);
  });

  it('sends a mapping with steps: to the DSL front-end', () => {
    const r = loadDocument('document: {name: x}\nsteps: []\n');
    expect(r.format).toBe('dsl');
  });

  it("tells a file with a second YAML document what to change, not the YAML library's API, in both front-ends", () => {
    const chain = loadDocument('chain: "a@web"\ntasks:\n  a: {kind: model, prompt: x}\n---\nchain: b\n', { file: 'm.chain.yaml' });
    const dsl = loadDocument('document: {dsl: "1.0", name: m}\nsteps: []\n---\nx: 1\n', { file: 'm.yaml' });
    const message =
      "a workflow file holds one YAML document, and a second one starts here: remove this '---' line and what follows, or put it in a file of its own";
    expect(chain.errors.map((e) => [e.code, e.message, e.location?.line, e.location?.column])).toEqual([
      ['invalid_document', `invalid YAML: ${message}`, 4, 1],
    ]);
    expect(dsl.errors.map((e) => [e.code, e.message, e.location?.line, e.location?.column])).toEqual([['yaml', message, 3, 1]]);
  });

  it("names YAML merge keys ('<<') as unsupported at the key in both front-ends, and a DSL complex key without a process warning", () => {
    const warn = vi.spyOn(process, 'emitWarning');
    const merge =
      "YAML merge keys ('<<') are not supported: the anchor's fields are not merged in here; write the fields out (an alias of a whole value, such as `a: *base`, does work)";
    const at = (text: string, file: string) =>
      loadDocument(text, { file }).errors.map((e) => [e.code, e.location?.line, e.location?.column, e.message]);
    expect(
      at('chain: "a@web > c"\ntasks:\n  a: &base {kind: model, prompt: x}\n  c:\n    <<: *base\n    prompt: y\n', 'm.chain.yaml'),
    ).toEqual([['invalid_document', 5, 5, merge]]);
    expect(
      at(
        'document: {dsl: "1.0", name: m}\nagents: {w: {}}\nsteps:\n  a: &s {call: agent, agent: w, input_template: x}\n  b:\n    <<: *s\n',
        'm.yaml',
      ),
    ).toEqual([['yaml', 6, 5, merge]]);
    expect(at('document: {dsl: "1.0", name: m}\nsteps:\n  - ? [x]\n    : 1\n', 'c.yaml')).toEqual([
      ['yaml', 3, 7, expect.stringMatching(/^mapping keys must be plain strings .* this key is a list/)],
    ]);
    expect(warn).not.toHaveBeenCalled();
    warn.mockRestore();
  });

  it('rejects a document with neither key as invalid_document', () => {
    const r = loadDocument('a: 1\n', { file: 'f.yaml' });
    expect(r.format).toBeUndefined();
    expect(r.errors.map((e) => [e.code, e.message, e.location?.line, e.location?.column])).toEqual([
      [
        'invalid_document',
        'not a Stepforge document: expected a `chain:` key (chain document), a `steps:` key (workflow DSL) or `tasks:`, a list of tasks with a `handler` (Contenox task chain)',
        1,
        1,
      ],
    ]);
    expect(loadDocument('- 1\n').errors[0]!.message).toBe(
      'not a Stepforge document: expected a YAML or JSON mapping with a `chain:`, `steps:` or `tasks:` key',
    );
  });

  it('still routes a chain document with a YAML error to the chain front-end', () => {
    const r = loadDocument('chain: "a > b\ntasks: {}\n');
    expect(r.format).toBe('chain');
    expect(r.errors[0]!.code).toBe('invalid_document');
  });
});

describe('Function: parseChain', () => {
  it('groups by precedence: the a > b & c trap is (a > b) & c', () => {
    const show = (t: string) => {
      const r = parseChain(t);
      return r.ok ? formatChainNode(r.ast) : r.error.reason;
    };
    expect(show('a > b & c')).toBe('((a > b) & c)');
    expect(show('a & b > c')).toBe('(a & (b > c))');
    expect(show('a & b | c & d')).toBe('((a & b) | (c & d))');
    expect(show('a > b > c')).toBe('(a > b > c)');
    expect(show('p@x@x > [q | r]')).toBe('(p@x > [(q | r)])');
  });

  it('names the kind of each syntax error', () => {
    const reason = (t: string) => {
      const r = parseChain(t);
      return r.ok ? 'ok' : r.error.reason;
    };
    expect(['', '[]', '[a', 'a]', '@a', 'a@', 'a$', 'a >', 'a b'].map(reason)).toEqual([
      'empty_expression',
      'empty_group',
      'unbalanced_bracket',
      'unbalanced_bracket',
      'stray_at',
      'dangling_at',
      'unexpected_character',
      'missing_operand',
      'missing_operator',
    ]);
  });

  it('refuses absurd nesting instead of overflowing the stack', () => {
    const r = parseChain('['.repeat(10_000) + 'a' + ']'.repeat(10_000));
    expect(r.ok).toBe(false);
    expect(!r.ok && [r.error.reason, r.error.offset]).toEqual(['too_deep', 512]);
    expect(parseChain('['.repeat(500) + 'a' + ']'.repeat(500)).ok).toBe(true);
  });
});

describe('Function: findCycle', () => {
  it('returns a path that starts and ends at the same node, or undefined', () => {
    expect(
      findCycle(3, [
        [0, 1],
        [1, 2],
      ]),
    ).toBeUndefined();
    expect(findCycle(1, [[0, 0]])).toEqual([0, 0]);
    expect(
      findCycle(4, [
        [0, 1],
        [1, 2],
        [2, 3],
        [3, 1],
      ]),
    ).toEqual([1, 2, 3, 1]);
  });

  it('handles a 100k-node path without recursion', () => {
    const n = 100_000;
    const edges = Array.from({ length: n - 1 }, (_, i) => [i, i + 1] as const);
    expect(findCycle(n, edges)).toBeUndefined();
    expect(findCycle(n, [...edges, [n - 1, 0]])!.length).toBe(n + 1);
  });
});

describe('Function: didYouMean', () => {
  it('suggests the closest name within a third of its length', () => {
    expect(didYouMean('drat', ['plan', 'draft'])).toBe('draft');
    expect(didYouMean('modle', ['model', 'tool'])).toBe('model');
    expect(didYouMean('PLAN', ['plan'])).toBe('plan');
    expect(didYouMean('zebra', ['plan', 'draft'])).toBeUndefined();
  });

  it('suggests a one-letter name for a doubled letter, but not for a different letter', () => {
    expect(didYouMean('aa', ['a'])).toBe('a');
    expect(didYouMean('x', ['a'])).toBeUndefined();
  });

  it('completes an unfinished name of 3+ characters to the shortest candidate it begins', () => {
    expect(didYouMean('dra', ['plan', 'drawing', 'draft'])).toBe('draft');
    expect(didYouMean('dr', ['draft'])).toBeUndefined();
  });
});

describe('Function: scalarOffsets', () => {
  const offsetsOf = (yaml: string) => {
    const doc = parseDocument(yaml);
    const node = doc.get('chain', true) as Scalar;
    return { value: String(node.value), map: scalarOffsets(node, yaml) };
  };
  const sourceChars = (yaml: string) => {
    const { value, map } = offsetsOf(yaml);
    return [...value].map((_, i) => yaml[map[i]!]).join('');
  };

  it('maps plain, folded plain, single- and double-quoted and block scalars character by character', () => {
    expect(sourceChars('chain: a > b\n')).toBe('a > b');
    expect(sourceChars('chain: a >\n  b & c\n')).toBe('a >\nb & c');
    expect(sourceChars("chain: 'a ''b'' c'\n")).toBe("a 'b' c");
    expect(sourceChars('chain: |\n  a >\n   b\n')).toBe('a >\n b\n');
    expect(sourceChars('chain: >-\n  a >\n  b\n')).toBe('a >\nb');
  });

  it('maps a double-quoted escape to its backslash, including \\u and escaped line breaks', () => {
    const yaml = 'chain: "a\\u0020>\\tb \\\n   & c"\n';
    const { value, map } = offsetsOf(yaml);
    expect(value).toBe('a >\tb & c');
    expect(map.slice(0, value.length).map((o) => yaml[o])).toEqual(['a', '\\', '>', '\\', 'b', ' ', '&', ' ', 'c']);
  });
});
