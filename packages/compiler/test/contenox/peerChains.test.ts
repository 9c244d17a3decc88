// Contenox's own chains (shared/peers/contenox/chains) validate, graph and compile to ASL that
// asl-validator accepts, unchanged.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileDocument, loadDocument } from '../../src/index.js';

const require = createRequire(import.meta.url);
const aslValidator = require('asl-validator') as (d: unknown) => { isValid: boolean; errorsText(sep?: string): string };
const DIR = join(__dirname, '../../../../../shared/peers/contenox/chains');

const PEERS = existsSync(DIR);
// Said in the output, not silently green, when the peers' files are not beside the repository.
if (!PEERS) console.warn(`[peers] SKIPPED: Contenox's chains not found at ${DIR}`);

describe.skipIf(!PEERS)('Function: loadDocument (Contenox chains of Contenox)', () => {
  const files = PEERS ? readdirSync(DIR).filter((f) => f.endsWith('.json')) : [];
  it('finds the seven chains', () => expect(files.length).toBe(7));
  for (const f of files) {
    it(`validates, graphs and compiles ${f} to ASL that asl-validator accepts`, () => {
      const text = readFileSync(join(DIR, f), 'utf8');
      const loaded = loadDocument(text, { file: f });
      expect(loaded.errors.map(String)).toEqual([]);
      expect(loaded.format).toBe('contenox');
      expect(loaded.graph!.nodes.length).toBeGreaterThan(0);
      const compiled = compileDocument(text, { file: f });
      const v = aslValidator(structuredClone(compiled.asl));
      expect(v.isValid ? '' : v.errorsText('\n')).toBe('');
      // Every task is a state of its own, with a Choice for its transition.
      for (const n of loaded.graph!.nodes) expect(Object.keys(compiled.asl.States as object)).toContain(n.handle);
    });
  }
});
