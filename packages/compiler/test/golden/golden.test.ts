import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { caseName, compileCase, GOLDEN_DIR, goldenCases } from './goldenCases.js';

const require = createRequire(import.meta.url);
const aslValidator = require('asl-validator') as (d: unknown) => { isValid: boolean; errorsText(sep?: string): string };
const update = process.env.UPDATE_GOLDEN === '1';

function golden(file: string, actual: unknown): void {
  const path = join(GOLDEN_DIR, 'expected', file);
  const text = JSON.stringify(actual, null, 2) + '\n';
  if (update || !existsSync(path)) writeFileSync(path, text);
  expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(JSON.parse(text));
}

describe('Function: compileDocument (golden corpus)', () => {
  const cases = goldenCases();
  it('has at least 30 workflows, chains and DSL', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
    expect(cases.filter((c) => c.endsWith('.chain.yaml')).length).toBeGreaterThanOrEqual(12);
  });
  for (const file of cases) {
    it(`compiles ${file} to its golden ASL and manifest, and the ASL passes asl-validator`, () => {
      const r = compileCase(file);
      golden(`${caseName(file)}.asl.json`, r.asl);
      golden(`${caseName(file)}.manifest.json`, r.manifest);
      const v = aslValidator(structuredClone(r.asl));
      expect(v.errorsText('\n')).toBe('');
      expect(v.isValid).toBe(true);
    });
  }
});
