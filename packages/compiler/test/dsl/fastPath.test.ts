// The DSL loader's fast path (js-yaml + node positions) must answer exactly what the precise path
// (`yaml` Document) answers — documents, graphs, every step and template location — or decline.
// Checked on every valid document of the corpus, examples/ and workflows/, on generated documents,
// on restyled copies (quoting, comments, CRLF, BOM) and on randomly mutated ones.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  loadChainDocument,
  loadDocument,
  loadDslDocument,
  loadDslDocumentFast,
  loadDslDocumentPrecise,
  type LoadDslOptions,
} from '@stepforge/compiler';
import { generateDslDocument } from '../../../../bench/dsl.bench.js';
import { rng } from './exprCorpus.js';
import { DOCUMENT_SNIPPETS, mutateDocument } from './mutateDocument.js';
import { pick, restyle } from './restyleDocument.js';
import { expectFastPathAgrees } from '../expectFastPathAgrees.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const corpusDir = fileURLToPath(new URL('./corpus/', import.meta.url));

function read(dir: string, filter: (f: string) => boolean): [string, string][] {
  return readdirSync(dir)
    .filter(filter)
    .sort()
    .map((f) => [f, readFileSync(dir + f, 'utf8')]);
}

/** Every DSL document that the precise path loads without errors (warnings allowed). */
const VALID: [string, string][] = [
  ...read(corpusDir, (f) => f.startsWith('v') && f.endsWith('.yaml')),
  ...read(`${root}examples/`, (f) => f.endsWith('.yaml') && !f.endsWith('.chain.yaml')),
  ...read(`${root}workflows/`, (f) => f.endsWith('.yaml') && !f.endsWith('.chain.yaml')),
];

/** Fast and precise results for the same text: the fast one must be absent or identical. */
function compare(text: string, options: LoadDslOptions) {
  const precise = loadDslDocumentPrecise(text, options);
  const fast = loadDslDocumentFast(text, options);
  const clean = expectFastPathAgrees(text, precise, fast);
  return { precise, fast, clean };
}

/** Plus what separates the two parsers: number and boolean spellings, line ends, directives, markers. */
const SNIPPETS = [
  ...DOCUMENT_SNIPPETS,
  ' # c',
  '\r\n',
  '0x1F',
  '0o17',
  '.5',
  '+12',
  '-0',
  '1_000',
  '0b11',
  'True',
  'yes',
  '\\',
  '\\u0041',
  ',',
  ': ',
  '---\n',
  '...\n',
  '%YAML 1.1\n',
  '__proto__: ',
];

describe('Function: loadDslDocumentFast', () => {
  it('loads every valid corpus, example and workflow document exactly as the precise path does', () => {
    expect(VALID.length).toBeGreaterThanOrEqual(25);
    for (const [file, text] of VALID) {
      for (const strict of [false, true]) {
        const { precise, fast, clean } = compare(text, { file, strict });
        expect([file, precise.document === undefined && !strict]).toEqual([file, false]);
        // Warnings (v18's unknown field) are the precise path's to report.
        expect([file, strict, fast !== undefined]).toEqual([file, strict, clean]);
      }
    }
  });

  it('keeps the source location of every step, template and declaration', () => {
    const text = readFileSync(`${corpusDir}v14-nested-outer-reference.yaml`, 'utf8');
    const fast = loadDslDocumentFast(text, { file: 'v14.yaml' })!;
    const each = fast.document!.workflow.steps[1]!;
    expect(each.location).toEqual({ file: 'v14.yaml', line: 8, column: 3, length: 4 });
    expect(each.kind === 'for_each' && each.do.steps[0]!.inputTemplate?.templates[0]?.location).toEqual({
      file: 'v14.yaml',
      line: 15,
      column: 25,
      length: 58,
    });
    expect(fast.document!.agents.planner!.location).toEqual({ file: 'v14.yaml', line: 3, column: 11, length: 7 });
  });

  it('matches the precise path on generated documents of 1 to 400 steps', () => {
    for (const n of [1, 7, 60, 400]) {
      const { fast } = compare(generateDslDocument(n), { file: 'gen.yaml' });
      expect([n, fast?.document?.name]).toEqual([n, 'bench-1000']);
    }
  });

  it('matches the precise path on 400 restyled documents (comments, quoting, CRLF, BOM)', () => {
    const r = rng(11);
    let taken = 0;
    for (let i = 0; i < 400; i++) {
      const [file, text] = pick(r, VALID);
      if (compare(restyle(r, text), { file }).fast) taken++;
    }
    // Restyling keeps most documents valid; the fast path must take most of those.
    expect(taken).toBeGreaterThan(250);
  });

  it('declines or agrees on 1,500 mutated documents, and takes the ones that stay valid', () => {
    const r = rng(5);
    let clean = 0;
    let taken = 0;
    for (let i = 0; i < 1_500; i++) {
      const [file, text] = pick(r, VALID);
      const c = compare(mutateDocument(r, text, SNIPPETS), { file, strict: r() < 0.3 });
      if (c.clean) clean++;
      if (c.fast) taken++;
    }
    expect(clean).toBeGreaterThan(30);
    expect(taken).toBeGreaterThan(clean * 0.8);
  });

  it('declines what it does not reproduce exactly, and loadDslDocument still answers precisely', () => {
    const base = 'document: { dsl: "1.0", name: x }\nagents: { a: {} }\nsteps:\n  s:\n    call: agent\n    agent: a\n';
    const declined = {
      tag: base + '    description: !!str 12\n',
      anchor: base + '    input: &in { q: 1 }\n',
      directive: '%YAML 1.2\n---\n' + base,
      emptyKey: base.replace('agents: { a: {} }', 'agents: { a: {}, ? }'),
      numericKey: base + '    input: { 1: one }\n',
      multiLineFlow: base + '    input: { q: 1,\n      r: 2 }\n',
      multiLineQuote: base + '    input_template: "one\n      two"\n',
      warning: base + '    promt: hi\n',
      error: base.replace('agent: a', 'agent: b'),
      yamlError: base + '    input: [\n',
    };
    for (const [what, text] of Object.entries(declined)) {
      expect([what, loadDslDocumentFast(text, { file: 'd.yaml' })]).toEqual([what, undefined]);
      expect(loadDslDocument(text, { file: 'd.yaml' })).toStrictEqual(loadDslDocumentPrecise(text, { file: 'd.yaml' }));
    }
  });

  it("reads plain scalars with the yaml package's core schema, not js-yaml's", () => {
    const base = 'document: { dsl: "1.0", name: x }\nagents: { a: {} }\nsteps:\n  s:\n    call: agent\n    agent: a\n';
    const text =
      base +
      '    input: { bin: 0b11, under: 1_000, oct: 0o17, hex: 0x1F, exp: .5e3, t: True, n: NULL, ninf: -.inf, nan: .NaN, s: 1:20, e: "" }\n';
    const fast = loadDslDocumentFast(text)!;
    expect(fast.document!.workflow.steps[0]!.input!.value).toStrictEqual({
      bin: '0b11',
      under: '1_000',
      oct: 15,
      hex: 31,
      exp: 500,
      t: true,
      n: null,
      ninf: -Infinity,
      nan: NaN,
      s: '1:20',
      e: '',
    });
    expect(fast).toStrictEqual(loadDslDocumentPrecise(text));
  });
});

describe('Function: loadDocument (one parse)', () => {
  it("gives the DSL front-end's own answer for valid and invalid documents, and the chain front-end's for chains", () => {
    const notDocuments: string[] = [];
    for (const [file, text] of [...VALID, ...read(corpusDir, (f) => f.startsWith('e'))]) {
      const r = loadDocument(text, { file });
      if (r.format === undefined) {
        notDocuments.push(`${file}: ${r.errors.map((e) => e.code).join()}`);
        continue;
      }
      expect([file, r.format]).toEqual([file, 'dsl']);
      const { format: _format, ...rest } = r;
      expect(rest).toStrictEqual(loadDslDocumentPrecise(text, { file }));
    }
    // A bare scalar and a mapping with neither `chain:` nor `steps:` are not Stepforge documents.
    expect(notDocuments).toEqual(['e03-not-a-mapping.yaml: invalid_document', 'e04-missing-steps.yaml: invalid_document']);
    // A chain document, and one in flow style whose `chain:` the line sniff does not see.
    const chains = [
      readFileSync(`${root}examples/quickstart.chain.yaml`, 'utf8'),
      '{"tasks": {"a": {"kind": "model", "prompt": "hi"}}, "chain": "a@web"}',
    ];
    for (const text of chains)
      expect(loadDocument(text, { file: 'c.yaml' })).toStrictEqual({ format: 'chain', ...loadChainDocument(text, { file: 'c.yaml' }) });
  });
});
