// Step names are user text, and the compiled JSONata keeps step outputs in variables: no name a format
// allows may change what a generated expression computes. Each case runs on the embedded engine.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { compileDocument, compileIr, JSONATA_HELPERS, type CompileResult, type IrDocument } from '@stepforge/compiler';
import { runScripted } from './scriptedRuntime.js';

/** JSONata's built-in functions, read from the installed package, plus the two it binds per evaluation. */
function jsonataBuiltins(): string[] {
  const source = readFileSync(createRequire(import.meta.url).resolve('jsonata'), 'utf8');
  const names = [...source.matchAll(/staticFrame\.bind\('([A-Za-z0-9]+)'/g)].map((m) => m[1]!);
  return [...new Set([...names, 'now', 'millis'])];
}

/** The functions Step Functions adds to JSONata (the engine registers the same ones). */
const STATES_FUNCTIONS = ['partition', 'range', 'hash', 'random', 'uuid', 'parse'];
/** Our helpers, the locals they and the compiled expressions bind, and the variables every run has. */
const HELPERS = Object.keys(JSONATA_HELPERS).map((h) => h.slice(1));
const LOCALS = [
  'v',
  'k',
  'c',
  't',
  'j',
  's',
  'e',
  'a',
  'b',
  'ta',
  'tb',
  'i',
  'p',
  'o',
  'sfV0',
  'sfV1',
  'sfV2',
  'states',
  'input',
  'run',
  'steps',
];
/** Names that look like the variables derived from a step's (`<step>_turn`) or a Parallel's. */
const DERIVED = ['s_plan', 'plan_turn', 's_plan_turn', 'par_x', 'input_2'];

const builtins = jsonataBuiltins();
const NAMES = [...new Set([...builtins, ...STATES_FUNCTIONS, ...HELPERS, ...LOCALS, ...DERIVED])];

/** What the scripted model answers for step `name`: a list (read by index) of objects. */
const answer = (name: string) => ({ output: { items: [{ id: `id-of-${name}` }] } });
/** The same as a model's text: templates read into JSON text (through `$contains` and `$parse`). */
const textAnswer = (name: string) => ({ output: JSON.stringify(answer(name).output) });

/** A chain document: `name` (a model step), a pure step calling built-ins on it, a model step reading both. */
function chainDoc(name: string): string {
  return [
    `chain: "${name} > zz_pure > zz_after@search"`,
    'tasks:',
    `  ${name}: { kind: model, prompt: "start" }`,
    `  zz_pure: { kind: pure, expr: "( $o := $parse($.${name}); $uppercase($string($lookup($o, 'items')[0].id)) & '/' & $string($count($o.items)) )" }`,
    `  zz_after: { kind: model, prompt: "got \${ steps.${name}.output.items.0.id } and \${ steps.zz_pure.output }" }`,
  ].join('\n');
}

/**
 * A DSL document: `name` (an agent step), a conditional on its output, a guarded step reading it, and an
 * output mapping reading it.
 */
function dslDoc(name: string): string {
  return [
    'document: { dsl: "1.0", name: step-names }',
    'agents: { bot: {} }',
    'steps:',
    `  ${name}: { call: agent, agent: bot, input_template: "start" }`,
    `  zz_check: { call: conditional, condition: "\${ steps.${name}.output.items.0.id == 'id-of-${name}' }" }`,
    `  zz_after: { call: agent, agent: bot, when: "\${ steps.zz_check.output }", input_template: "got \${ steps.${name}.output.items.0.id }" }`,
    'output:',
    `  id: "\${ steps.${name}.output.items.0.id }"`,
    '  after: "${ steps.zz_after.output }"',
  ].join('\n');
}

/** The prompt (template value) step `id` received. */
const inputOf = (run: Awaited<ReturnType<typeof runScripted>>, id: string) => run.calls.find((c) => c.step.id === id)?.inputs.value;

describe('Function: lowerWorkflow (step names, run on the embedded engine)', () => {
  it('covers every JSONata built-in, Step Functions function and helper name', () => {
    expect(builtins).toEqual(
      expect.arrayContaining(['string', 'count', 'lookup', 'type', 'exists', 'contains', 'sift', 'merge', 'now', 'millis']),
    );
    expect(builtins.length).toBeGreaterThan(60);
    expect(HELPERS).toEqual(expect.arrayContaining(['sfStep', 'sfJson', 'sfStr', 'sfTruthy', 'sfEq']));
  });

  describe('Method: chain documents', () => {
    it.each(NAMES)('runs a chain whose step is named %s', async (name) => {
      const run = await runScripted(compileDocument(chainDoc(name), { file: 'names.chain.yaml' }), {}, { [name]: () => textAnswer(name) });
      expect(run.result.error).toBeUndefined();
      expect(run.result.status).toBe('SUCCEEDED');
      expect(inputOf(run, 'zz_after')).toBe(`got id-of-${name} and ID-OF-${name.toUpperCase()}/1`);
    });
  });

  describe('Method: DSL documents', () => {
    it.each(NAMES)('runs a DSL workflow whose step is named %s', async (name) => {
      const run = await runScripted(compileDocument(dslDoc(name), { file: 'names.yaml' }), {}, { [name]: () => answer(name) });
      expect(run.result.error).toBeUndefined();
      expect(run.result.status).toBe('SUCCEEDED');
      expect(inputOf(run, 'zz_after')).toBe(`got id-of-${name}`);
      expect(run.result.output).toEqual({ id: `id-of-${name}`, after: 'zz_after<got id-of-' + name + '>' });
    });
  });

  describe('Method: compiled IR', () => {
    // IR step ids are not limited to identifiers: these hold characters no JSONata variable name can,
    // and two of them clean up to the same identifier.
    const odd = ['a.b', 'a b', 'a-b', 'a_b', '$string', 'x"y', "it's", '0lead', ''.padEnd(80, 'n')];

    const ref = (n: string) => `steps[${JSON.stringify(n)}].output.items.0.id`;
    const fn = (id: string, value: string, reads: readonly string[]) => ({
      id,
      kind: 'function' as const,
      identity: `i-${id}`,
      config: { function: 'f' },
      tools: [],
      secrets: [],
      input: { kind: 'template' as const, value, reads },
    });

    /** The named steps side by side, and a reader of all of them that is also the result. */
    function fanIn(names: readonly string[]): IrDocument {
      const reader = fn('reader', names.map((n) => `\${ ${ref(n)} }`).join('|'), names);
      return {
        name: 'odd-names',
        format: 'dsl',
        workflow: { steps: [...names.map((n) => fn(n, 'go', [])), reader], edges: names.map((_, i) => [i, names.length] as const) },
      };
    }

    /** The named steps in sequence, each reading the one before. */
    function sequence(names: readonly string[]): IrDocument {
      const steps = names.map((n, i) => (i === 0 ? fn(n, 'go', []) : fn(n, `\${ ${ref(names[i - 1]!)} }`, [names[i - 1]!])));
      return { name: 'all-names', format: 'dsl', workflow: { steps, edges: names.slice(1).map((_, i) => [i, i + 1] as const) } };
    }

    it('keeps apart steps whose names clean up to the same identifier and reads each one', async () => {
      // Three at most: a state carrying more values the state machine reads exceeds the payload budget.
      const same = ['a.b', 'a-b', 'a_b'];
      const compiled: CompileResult = compileIr(fanIn(same));
      const run = await runScripted(compiled, {}, Object.fromEntries(same.map((n) => [n, () => answer(n)])));
      expect(run.result.error).toBeUndefined();
      expect(inputOf(run, 'reader')).toBe(same.map((n) => `id-of-${n}`).join('|'));
    });

    it('runs all the names in one workflow, each step reading the one before', async () => {
      const names = [...odd, ...NAMES];
      const run = await runScripted(compileIr(sequence(names)), {}, Object.fromEntries(names.map((n) => [n, () => answer(n)])));
      expect(run.result.error).toBeUndefined();
      expect(names.slice(1).map((n) => inputOf(run, n))).toEqual(names.slice(0, -1).map((n) => `id-of-${n}`));
    });

    it('never assigns a variable without `_` (the one character no function name holds)', () => {
      const compiled = compileIr(sequence([...odd, ...NAMES]));
      const assigned = new Set<string>();
      const visit = (v: unknown): void => {
        if (Array.isArray(v)) v.forEach(visit);
        else if (v !== null && typeof v === 'object') {
          for (const [k, x] of Object.entries(v)) {
            if (k === 'Assign' && x !== null && typeof x === 'object') Object.keys(x).forEach((n) => assigned.add(n));
            visit(x);
          }
        }
      };
      visit(compiled.asl);
      expect(assigned.size).toBeGreaterThan(NAMES.length);
      expect([...assigned].filter((n) => !n.includes('_') && n !== 'input' && n !== 'run')).toEqual([]);
    });
  });
});
