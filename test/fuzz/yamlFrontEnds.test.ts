// Fuzzing every YAML front-end with mutated documents that lean on anchors, aliases and tags: the
// format dispatcher (loadDocument), the chain and DSL loaders, compileDocument and infra's
// loadWorkflow must answer each with named StepforgeErrors (located, for the loaders) or a result —
// never a crash, which the CLI would print as an internal error. The default run is small;
// STEPFORGE_LONG runs 100,000 cases.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileDocument, isStepforgeError, loadChainDocument, loadDocument, loadDslDocument, type StepforgeError } from '@stepforge/compiler';
import { loadWorkflow } from '../../infra/lib/workflows/loadWorkflows.js';
import { rng, type Rand } from '../../packages/compiler/test/dsl/exprCorpus.js';
import { DOCUMENT_SNIPPETS, mutateDocument } from '../../packages/compiler/test/dsl/mutateDocument.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const yamlIn = (dir: string) =>
  readdirSync(root + dir).filter((f) => /\.ya?ml$/.test(f)).sort().map((f) => readFileSync(`${root}${dir}/${f}`, 'utf8'));
/** Chain documents and DSL documents: the golden corpus, the DSL error corpus, the examples, the deployed workflows. */
const SEEDS = [...yamlIn('packages/compiler/test/golden/cases'), ...yamlIn('packages/compiler/test/dsl/corpus'), ...yamlIn('examples'), ...yamlIn('workflows')];

/** What the mutations insert besides the general snippets: anchors, aliases, tags, merge keys, directives. */
const YAML_SNIPPETS = [
  ...DOCUMENT_SNIPPETS,
  '*a', '*t', '&a ', '&t ', '*a ', '&a [*a]', '&t { x: *t }', '<<: *a\n', '? *a\n', '*a: ',
  '!!str ', '!!int ', '!!float ', '!!bool ', '!!null ', '!!map ', '!!seq ', '!!binary ', '!!timestamp ', '!!set ', '!!omap ', '!!pairs ',
  '!foo ', '!e!tag ', '!<tag:yaml.org,2002:str> ', '!<x> ', '!!str &a ', '&a !!str ', '%YAML 1.2\n---\n', '%TAG !e! tag:example.com:\n---\n',
];
const TAGS = ['!!str', '!!int', '!!float', '!!binary', '!!timestamp', '!!set', '!foo', '!!map', '!!seq', '!<x>'];
/** `key: value` lines (a list item's first key too), where an anchor, alias or tag can replace or mark the value. */
const VALUE_LINE = /^(\s*(?:- )?[A-Za-z_"][\w"-]*:[ \t]+)(\S.*)$/;
/** `key:` lines that open a nested mapping or list. */
const OPEN_LINE = /^(\s*(?:- )?[A-Za-z_"][\w"-]*:)[ \t]*$/;
const LAUGHS = ['l0: &l0 [x, x, x, x, x, x, x, x, x, x]', ...[1, 2, 3, 4].map((i) => `l${i}: &l${i} [${Array(10).fill(`*l${i - 1}`).join(', ')}]`)].join('\n') + '\n';

const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** One structured edit about anchors, aliases and tags (the random snippets rarely line them up). */
function mutateAliases(r: Rand, text: string): string {
  const lines = text.split('\n');
  const values = lines.map((l, i) => (VALUE_LINE.test(l) ? i : -1)).filter((i) => i >= 0);
  const opens = lines.map((l, i) => (OPEN_LINE.test(l) ? i : -1)).filter((i) => i >= 0);
  const p = r();
  const name = pick(r, ['a', 't', 'x1']);
  const setValue = (i: number, f: (prefix: string, value: string) => string) => {
    const m = VALUE_LINE.exec(lines[i]!)!;
    lines[i] = f(m[1]!, m[2]!);
  };
  if (p < 0.35 && values.length >= 2) {
    // An anchor on one value and an alias of it on another: before it (no anchor yet) or after (resolves).
    const a = pick(r, values);
    const b = pick(r, values);
    setValue(a, (k, v) => `${k}&${name} ${v}`);
    if (b !== a) setValue(b, (k) => `${k}*${name}`);
  } else if (p < 0.5 && opens.length > 0) {
    // An anchor on a nested value and an alias inside it: the value would contain itself.
    const o = pick(r, opens);
    lines[o] = `${lines[o]} &${name}`;
    const inner = values.filter((i) => i > o);
    if (inner.length > 0) setValue(inner[0]!, (k) => `${k}*${name}`);
  } else if (p < 0.6 && opens.length > 0) {
    // A whole nested value replaced by an alias (of an anchor that may not exist).
    const o = pick(r, opens);
    lines[o] = `${lines[o]} *${name}`;
  } else if (p < 0.85 && values.length > 0) {
    setValue(pick(r, values), (k, v) => `${k}${pick(r, TAGS)} ${v}`);
  } else if (p < 0.92) {
    return LAUGHS + text;
  } else if (values.length > 0) {
    setValue(pick(r, values), (k) => `${k}*${name}`);
  }
  return lines.join('\n');
}

/** The places an internal error would come from, and what each answered. */
interface Tally {
  cases: number;
  withAliasOrTag: number;
  loaded: number;
  compiled: number;
  deployed: number;
  codes: Map<string, number>;
}

function fail(i: number, entry: string, text: string, e: unknown): never {
  throw new Error(`${entry} on mutated document #${i}: ${e instanceof Error ? e.stack : String(e)}\n---\n${text}`);
}

/** Checks a loader's errors: every one a StepforgeError with a code and a location. */
function checkErrors(i: number, entry: string, text: string, errors: readonly StepforgeError[], tally: Tally): void {
  for (const e of errors) {
    if (!isStepforgeError(e) || !e.code || e.code === 'internal' || !e.location || e.location.line < 1 || e.location.column < 1) {
      fail(i, `${entry}: unnamed or unlocated error`, text, e);
    }
    void e.toString();
    tally.codes.set(e.code, (tally.codes.get(e.code) ?? 0) + 1);
  }
}

/** Runs a thrower that may only throw StepforgeErrors; true when it returned. */
function named(i: number, entry: string, text: string, f: () => unknown): boolean {
  try {
    f();
    return true;
  } catch (e) {
    if (!isStepforgeError(e) || !e.code || e.code === 'internal') fail(i, `${entry} threw`, text, e);
    void e.toString();
    return false;
  }
}

function fuzz(seed: number, count: number): Tally {
  const r = rng(seed);
  const tally: Tally = { cases: 0, withAliasOrTag: 0, loaded: 0, compiled: 0, deployed: 0, codes: new Map() };
  for (let i = 0; i < count; i++) {
    let text = pick(r, SEEDS);
    if (r() < 0.6) text = mutateAliases(r, text);
    if (r() < 0.7) text = mutateDocument(r, text, YAML_SNIPPETS);
    tally.cases++;
    if (/[*&!]/.test(text)) tally.withAliasOrTag++;
    const strict = r() < 0.3;
    let dispatched;
    try {
      dispatched = loadDocument(text, { file: 'fuzz.yaml', strict });
    } catch (e) {
      fail(i, 'loadDocument threw', text, e);
    }
    checkErrors(i, 'loadDocument', text, dispatched.errors, tally);
    // The format's own loader, as `stepforge validate` and the fast paths call it.
    const own = dispatched.format === 'chain' ? loadChainDocument : loadDslDocument;
    let direct;
    try {
      direct = own(text, { file: 'fuzz.yaml', strict });
    } catch (e) {
      fail(i, `load ${dispatched.format ?? 'dsl'} document threw`, text, e);
    }
    checkErrors(i, `load ${dispatched.format ?? 'dsl'} document`, text, direct.errors, tally);
    if (dispatched.errors.length > 0) continue;
    tally.loaded++;
    if (named(i, 'compileDocument', text, () => compileDocument(text, { file: 'fuzz.yaml' }))) tally.compiled++;
    if (named(i, 'loadWorkflow', text, () => loadWorkflow(text, 'workflows/fuzz.yaml', compileDocument))) tally.deployed++;
  }
  return tally;
}

describe('Function: the YAML front-ends (fuzz with anchors, aliases and tags)', () => {
  it('answers 1,500 mutated documents with named errors only, in every front-end', () => {
    const t = fuzz(11, 1_500);
    console.log(`yaml front-end fuzz: ${JSON.stringify({ ...t, codes: Object.fromEntries(t.codes) })}`);
    // The mutations must reach the alias and tag checks, and some documents must get through to compile and deploy.
    expect(t.withAliasOrTag).toBeGreaterThan(700);
    const yamlMessages = (t.codes.get('invalid_document') ?? 0) + (t.codes.get('yaml') ?? 0);
    expect(yamlMessages).toBeGreaterThan(300);
    expect(t.compiled).toBeGreaterThan(50);
    expect(t.deployed).toBeGreaterThan(50);
  }, 300_000);

  it.runIf(process.env.STEPFORGE_LONG)('answers 100,000 mutated documents (STEPFORGE_LONG)', () => {
    const t = fuzz(12, 100_000);
    console.log(`yaml front-end fuzz: ${t.cases} cases (${t.withAliasOrTag} with anchors, aliases or tags), ${t.loaded} loaded, ${t.compiled} compiled, ${t.deployed} deployed, 0 internal errors; codes ${JSON.stringify(Object.fromEntries(t.codes))}`);
    expect(t.cases).toBe(100_000);
  }, 3_600_000);
});
