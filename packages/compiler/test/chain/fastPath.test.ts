// The chain loader's fast path (js-yaml + node positions) must answer exactly what the precise path
// (`yaml` Document) answers — document, graph, step and task locations, warnings, errors — or decline.
// Checked on every valid chain document of the corpus, examples/ and workflows/, on generated ones and
// on restyled copies (quoting, comments, CRLF, BOM, flow vs block task maps, JSON).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Document, parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  loadChainDocument,
  loadChainDocumentFast,
  loadChainDocumentPrecise,
  loadDocument,
  type LoadChainOptions,
} from '../../src/index.js';
import { randomDagChain } from '../../../../bench/compile.bench.js';
import { rng, type Rand } from '../dsl/exprCorpus.js';
import { pick, restyle } from '../dsl/restyleDocument.js';
import { expectFastPathAgrees } from '../expectFastPathAgrees.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

interface CorpusCase {
  name: string;
  document?: string;
  level?: 'topology' | 'full';
  error?: unknown;
}

const corpus = parse(readFileSync(new URL('./corpus.yaml', import.meta.url), 'utf8')) as CorpusCase[];

function read(dir: string): [string, string][] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.chain.yaml'))
    .sort()
    .map((f) => [f, readFileSync(dir + f, 'utf8')]);
}

/** Every chain document the precise path loads without errors (warnings allowed), with its level. */
const VALID: [string, string, LoadChainOptions][] = [
  // Case names become file names a workflow can be named after (a chain without `name:` takes its file's).
  ...corpus
    .filter((c) => c.document !== undefined && c.error === undefined)
    .map(
      (c) =>
        [`${c.name.replace(/[^A-Za-z0-9_-]+/g, '-')}.chain.yaml`, c.document!, { level: c.level ?? 'full' }] as [
          string,
          string,
          LoadChainOptions,
        ],
    ),
  ...[...read(`${root}examples/`), ...read(`${root}workflows/`)].map(([f, t]) => [f, t, {}] as [string, string, LoadChainOptions]),
];

/** Fast and precise results for the same text: the fast one must be absent or identical. */
function compare(text: string, options: LoadChainOptions) {
  const precise = loadChainDocumentPrecise(text, options);
  const fast = loadChainDocumentFast(text, options);
  const clean = expectFastPathAgrees(text, precise, fast);
  expect(loadChainDocument(text, options)).toStrictEqual(precise);
  expect(loadDocument(text, options)).toStrictEqual({ format: 'chain', ...precise });
  return { precise, fast, clean };
}

const STRING_TYPES = ['PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE'] as const;

/** The same data re-serialised by `yaml`: each quoting style, flow or block maps, or JSON. */
function reserialise(r: Rand, text: string): string {
  const data = parse(text) as unknown;
  if (r() < 0.2) return JSON.stringify(data, null, r() < 0.5 ? 2 : undefined);
  return new Document(data).toString({
    lineWidth: 0,
    defaultStringType: pick(r, STRING_TYPES),
    defaultKeyType: pick(r, [null, ...STRING_TYPES]),
    collectionStyle: pick(r, ['any', 'block', 'flow'] as const),
  });
}

describe('Function: loadChainDocumentFast', () => {
  it('loads every valid corpus, example and workflow chain document exactly as the precise path does', () => {
    expect(VALID.length).toBeGreaterThanOrEqual(10);
    const cleanDeclined: string[] = [];
    for (const [file, text, options] of VALID) {
      for (const strict of [false, true]) {
        const { precise, fast, clean } = compare(text, { ...options, file, strict });
        expect([file, precise.errors.length > 0 && !strict]).toEqual([file, false]);
        if (clean && !fast) cleanDeclined.push(`${file}${strict ? ' (strict)' : ''}`);
      }
    }
    // Their `chain:` scalars are all single-line, so every clean one takes the fast path.
    expect(cleanDeclined).toEqual([]);
  });

  it('keeps the source location of every step, task and input field', () => {
    const text = readFileSync(`${root}examples/quickstart.chain.yaml`, 'utf8');
    const fast = loadChainDocumentFast(text, { file: 'q.chain.yaml' })!;
    const plan = fast.document!.steps[0]!;
    expect(plan.location).toEqual({ file: 'q.chain.yaml', line: 3, column: 9, length: 4 });
    expect(plan.taskLocation).toEqual({ file: 'q.chain.yaml', line: 7, column: 3, length: 4 });
    expect(fast.document!.input.fields[0]!.location).toEqual({ file: 'q.chain.yaml', line: 5, column: 3, length: 5 });
  });

  it('matches the precise path on generated documents of 2 to 500 tasks', () => {
    for (const n of [2, 3, 40, 500]) {
      const { fast } = compare(randomDagChain(n, n), { file: 'gen.chain.yaml' });
      expect([n, fast?.document?.steps.length]).toEqual([n, n]);
    }
  });

  it('matches the precise path on 400 restyled and re-serialised documents', () => {
    const r = rng(17);
    let clean = 0;
    let taken = 0;
    for (let i = 0; i < 400; i++) {
      const [file, text, options] = pick(r, VALID);
      const variant = restyle(r, r() < 0.5 ? reserialise(r, text) : text);
      const c = compare(variant, { ...options, file });
      if (c.clean) clean++;
      if (c.fast) taken++;
    }
    // Flow maps and quoted strings that `yaml` spreads over several lines are declined by design.
    expect(clean).toBeGreaterThan(300);
    expect(taken).toBeGreaterThan(200);
  });

  it('declines what it does not reproduce exactly, and loadChainDocument still answers precisely', () => {
    const tasks = 'tasks:\n  a: { kind: model, prompt: hi }\n  b: { kind: model, prompt: there }\n';
    const declined = {
      literal: `chain: |\n  a@web > b\n${tasks}`,
      folded: `chain: >-\n  a@web >\n  b\n${tasks}`,
      multiLinePlain: `chain: a@web >\n  b\n${tasks}`,
      multiLineQuoted: `chain: "a@web >\n  b"\n${tasks}`,
      anchor: `chain: &c a@web > b\n${tasks}`,
      tag: `chain: !!str a@web > b\n${tasks}`,
      unusedTask: `chain: a@web\n${tasks}`,
      unknownField: `chain: a@web > b\nchian: x\n${tasks}`,
      unknownHandle: `chain: a@web > c\n${tasks}`,
      badTask: `chain: a@web > b\ntasks:\n  a: { kind: model, prompt: hi }\n  b: { kind: modle, prompt: x }\n`,
      duplicateTask: `chain: a@web > b\n${tasks}  b: { kind: model, prompt: again }\n`,
      yamlError: `chain: [a\n${tasks}`,
    };
    for (const [what, text] of Object.entries(declined)) {
      expect([what, loadChainDocumentFast(text, { file: 'd.yaml' })]).toEqual([what, undefined]);
      expect(loadChainDocument(text, { file: 'd.yaml' })).toStrictEqual(loadChainDocumentPrecise(text, { file: 'd.yaml' }));
    }
    // Single-line plain, single- and double-quoted (with escapes) chains are taken.
    for (const chain of ['a@web > b', "'a@web > b'", '"a@web >\\tb"', '"a@web > \\x62"']) {
      expect([chain, compare(`chain: ${chain}  # c\n${tasks}`, {}).fast !== undefined]).toEqual([chain, true]);
    }
  });
});
