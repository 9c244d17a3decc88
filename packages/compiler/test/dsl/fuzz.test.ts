// Fuzzing: mutated corpus documents and mutated expressions must produce named StepforgeErrors with
// locations (or load), never a crash. The default run is small; STEPFORGE_LONG runs 100k of each.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import { evaluateTemplate, isStepforgeError, loadDslDocument, parseTemplate, templateToJsonata } from '@stepforge/compiler';
import { context, expression, rng, type Rand } from './exprCorpus.js';
import { mutateDocument } from './mutateDocument.js';

const DSL_CODES = new Set([
  'yaml',
  'schema',
  'unknown_field',
  'unknown_agent',
  'unknown_function',
  'unknown_mcp_server',
  'unknown_step',
  'invalid_secret',
  'expression',
  'cycle',
  'duplicate_step',
  'unknown_input',
  'unsupported_dsl_version',
]);

const dir = fileURLToPath(new URL('./corpus/', import.meta.url));
const seeds = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .map((f) => readFileSync(dir + f, 'utf8'));

function fuzzDocuments(seed: number, count: number): Map<string, number> {
  const r = rng(seed);
  const codes = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const text = mutateDocument(r, seeds[Math.floor(r() * seeds.length)]!);
    let result;
    try {
      result = loadDslDocument(text, { file: 'fuzz.yaml', strict: r() < 0.3 });
    } catch (e) {
      throw new Error(`crash on mutated document #${i}: ${(e as Error).stack}\n---\n${text}`);
    }
    for (const e of result.errors) {
      if (!isStepforgeError(e) || !DSL_CODES.has(e.code) || !e.location || e.location.line < 1 || e.location.column < 1) {
        throw new Error(`unnamed or unlocated error on mutated document #${i}: ${String(e)}\n---\n${text}`);
      }
      // Printing must not throw either (caret excerpts over odd text).
      void e.toString();
      codes.set(e.code, (codes.get(e.code) ?? 0) + 1);
    }
    if (result.errors.length === 0 && !result.document) throw new Error(`no document and no errors for #${i}`);
  }
  return codes;
}

function mutateExpression(r: Rand, text: string): string {
  const chars = [
    '$',
    '{',
    '}',
    '(',
    ')',
    '[',
    ']',
    '.',
    '|',
    '&',
    '=',
    '!',
    '<',
    '>',
    '"',
    "'",
    '\\',
    ' ',
    '0',
    '-',
    'a',
    'default',
    'null',
  ];
  let t = text;
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n; i++) {
    const at = Math.floor(r() * (t.length + 1));
    t = r() < 0.4 ? t.slice(0, at) + t.slice(at + 1) : t.slice(0, at) + chars[Math.floor(r() * chars.length)]! + t.slice(at);
  }
  return t;
}

async function fuzzExpressions(seed: number, count: number): Promise<{ parsed: number; rejected: number }> {
  const r = rng(seed);
  let parsed = 0;
  let rejected = 0;
  for (let i = 0; i < count; i++) {
    const text = mutateExpression(r, `\${ ${expression(r)} }`);
    let t;
    try {
      t = parseTemplate(text);
    } catch (e) {
      if (!isStepforgeError(e) || e.code !== 'expression' || typeof e.details?.offset !== 'number') {
        throw new Error(`unnamed error for ${JSON.stringify(text)}: ${String(e)}`);
      }
      const offset = e.details.offset;
      if (offset < 0 || offset > text.length) throw new Error(`offset ${offset} outside ${JSON.stringify(text)}`);
      rejected++;
      continue;
    }
    parsed++;
    try {
      evaluateTemplate(t, context(r));
    } catch (e) {
      if (!isStepforgeError(e) || e.code !== 'expression_eval')
        throw new Error(`evaluation crash for ${JSON.stringify(text)}: ${String(e)}`);
    }
    // Every accepted expression must translate to JSONata that compiles.
    if (i % 10 === 0) jsonata(templateToJsonata(t));
  }
  return { parsed, rejected };
}

describe('Function: loadDslDocument (fuzz)', () => {
  it('answers 1,500 mutated corpus documents with named, located errors only', () => {
    const codes = fuzzDocuments(1, 1_500);
    // The mutations must reach the deeper checks, not only the YAML parser.
    for (const c of ['yaml', 'schema', 'expression']) expect([c, (codes.get(c) ?? 0) > 0]).toEqual([c, true]);
  });

  it.runIf(process.env.STEPFORGE_LONG)(
    'answers 100,000 mutated documents (STEPFORGE_LONG)',
    () => {
      fuzzDocuments(2, 100_000);
    },
    1_200_000,
  );
});

describe('Function: parseTemplate (fuzz)', () => {
  it('accepts or rejects 5,000 mutated expressions with named errors only', async () => {
    const { parsed, rejected } = await fuzzExpressions(3, 5_000);
    expect(parsed).toBeGreaterThan(500);
    expect(rejected).toBeGreaterThan(500);
  });

  it.runIf(process.env.STEPFORGE_LONG)(
    'handles 100,000 mutated expressions (STEPFORGE_LONG)',
    async () => {
      await fuzzExpressions(4, 100_000);
    },
    1_200_000,
  );
});
