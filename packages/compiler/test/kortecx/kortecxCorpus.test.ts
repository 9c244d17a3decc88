import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  compileDocument,
  kortecxLowering,
  loadChainDocument,
  loadChainDocumentFast,
  loadChainDocumentPrecise,
  type ChainDocument,
} from '../../src/index.js';
import { expectFastPathAgrees } from '../expectFastPathAgrees.js';

const require = createRequire(import.meta.url);
const aslValidator = require('asl-validator') as (d: unknown) => { isValid: boolean; errorsText(sep?: string): string };

interface KortecxCase {
  name: string;
  document: string;
  error?: { class: string; line: number; column: number };
  warnings?: string[];
  kortecx_error?: string;
  run?: boolean;
}

const corpus = parse(readFileSync(new URL('./corpus.yaml', import.meta.url), 'utf8')) as KortecxCase[];
const EXPECTED = new URL('./expected.json', import.meta.url);
const update = process.env.UPDATE_GOLDEN === '1';
const expected = (existsSync(EXPECTED) ? JSON.parse(readFileSync(EXPECTED, 'utf8')) : {}) as Record<string, unknown>;
const FILE = 'case.chain.yaml';

/** What `graph --format kortecx` prints for a document, or the first error's code. */
function lower(text: string): { output?: string; error?: string } {
  const loaded = loadChainDocument(text, { file: FILE, tierPolicy: false });
  if (loaded.errors.length > 0 || !loaded.document) return { error: loaded.errors[0]?.code };
  const r = kortecxLowering(loaded.document as ChainDocument);
  return r.lowering ? { output: JSON.stringify(r.lowering) } : { error: r.errors[0]?.code };
}

describe('Function: kortecxLowering (Kortecx task-map corpus)', () => {
  it('has at least 40 documents, valid and invalid', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(40);
    expect(corpus.filter((c) => c.error === undefined).length).toBeGreaterThanOrEqual(20);
    expect(corpus.filter((c) => c.error !== undefined).length).toBeGreaterThanOrEqual(15);
  });

  it.each(corpus.map((c) => [c.name, c] as const))('%s', (name, c) => {
    const r = loadChainDocument(c.document, { file: FILE });
    // Kortecx fields load the same on the fast path (clean documents) as on the precise one.
    expectFastPathAgrees(
      c.document,
      loadChainDocumentPrecise(c.document, { file: FILE }),
      loadChainDocumentFast(c.document, { file: FILE }),
    );
    if (c.error) {
      const first = r.errors[0];
      expect(first && { class: first.code, line: first.location?.line, column: first.location?.column }).toEqual(c.error);
      // Every error says how to fix it in words, never an internal failure.
      expect(first!.code).not.toBe('internal');
    } else {
      expect(r.errors.map(String)).toEqual([]);
      const compiled = compileDocument(c.document, { file: FILE });
      const v = aslValidator(structuredClone(compiled.asl));
      expect(v.errorsText('\n')).toBe('');
      expect(v.isValid).toBe(true);
    }
    expect(r.warnings.map((w) => `${w.code} ${w.location?.line}:${w.location?.column}`)).toEqual(c.warnings ?? []);

    const k = lower(c.document);
    if (c.kortecx_error) {
      expect(k).toEqual({ error: c.kortecx_error });
      return;
    }
    expect(k.error).toBeUndefined();
    if (update) expected[name] = JSON.parse(k.output!);
    else expect(k.output).toBe(JSON.stringify(expected[name]));
  });

  if (update) {
    it('writes expected.json', () => {
      writeFileSync(EXPECTED, JSON.stringify(expected, null, 2) + '\n');
    });
  }
});
