import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonLength } from '../../src/checks/quotas/jsonLength.js';

describe('Function: jsonLength', () => {
  it('is the length of JSON.stringify for escapes, surrogates, numbers and empty containers', () => {
    const values: unknown[] = [
      '',
      'plain',
      'quote " and \\ backslash',
      'controls \b\f\n\r\t \u0000 \u001f',
      'é — 😀',
      'lone \ud800 high',
      'lone \udc00 low',
      'end \ud83d',
      0,
      -0,
      1.5e-7,
      123456789012345680000,
      NaN,
      Infinity,
      true,
      false,
      null,
      [],
      {},
      [1, 'a', null],
      { a: 1, b: [true, { c: 'd' }] },
    ];
    for (const v of values) expect(jsonLength(v), JSON.stringify(v)).toBe(JSON.stringify(v).length);
  });

  it('leaves out undefined, functions and symbols in objects and writes them as null in arrays', () => {
    const v = { a: undefined, b: () => 1, c: Symbol('s'), d: [undefined, () => 1, Symbol('t')], e: 1 };
    expect(jsonLength(v)).toBe(JSON.stringify(v).length);
    expect(jsonLength([1, , 3])).toBe(JSON.stringify([1, , 3]).length);
  });

  it('defers to JSON.stringify for values with toJSON', () => {
    const v = { when: new Date(0), nested: { toJSON: () => 'x' } };
    expect(jsonLength(v)).toBe(JSON.stringify(v).length);
  });

  it('agrees with JSON.stringify on arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => jsonLength(v) === JSON.stringify(v).length),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => jsonLength(s) === JSON.stringify(s).length),
      { numRuns: 500 },
    );
  });
});
