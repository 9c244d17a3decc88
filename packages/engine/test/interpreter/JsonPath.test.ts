import { describe, expect, it } from 'vitest';
import { compilePath, evaluatePath, isReferencePath, JsonPathError, setAtPath } from '../../src/jsonpath/JsonPath.js';

const doc = {
  a: { b: [1, 2, 3], c: 'x' },
  users: [
    { name: 'a', status: 0 },
    { name: 'b', status: 1 },
  ],
  'odd key': 5,
};

describe('Function: evaluatePath', () => {
  it('returns one value for a definite path', () => {
    expect(evaluatePath(compilePath('$.a.b[1]'), doc)).toEqual({ found: true, value: 2 });
    expect(evaluatePath(compilePath("$['odd key']"), doc)).toEqual({ found: true, value: 5 });
    expect(evaluatePath(compilePath('$'), doc).value).toBe(doc);
  });

  it('reports a missing leaf and a missing intermediate the way Jayway words them', () => {
    expect(evaluatePath(compilePath('$.nope'), doc)).toMatchObject({ found: false, reason: "No results for path: $['nope']" });
    expect(evaluatePath(compilePath('$.no.such'), doc)).toMatchObject({ found: false, reason: "Missing property in path $['no']" });
  });

  it('returns a list for wildcards, slices, filters and deep scans', () => {
    expect(evaluatePath(compilePath('$.a.b[*]'), doc).value).toEqual([1, 2, 3]);
    expect(evaluatePath(compilePath('$.a.b[1:]'), doc).value).toEqual([2, 3]);
    expect(evaluatePath(compilePath('$.a.b[:1]'), doc).value).toEqual([1]);
    expect(evaluatePath(compilePath('$.users[?(@.status == 0)]'), doc).value).toEqual([{ name: 'a', status: 0 }]);
    expect(evaluatePath(compilePath('$..name'), doc).value).toEqual(['a', 'b']);
    expect(evaluatePath(compilePath('$.users[*].name'), doc).value).toEqual(['a', 'b']);
  });

  it('rejects malformed paths with a syntax JsonPathError', () => {
    let err: unknown;
    try {
      compilePath('a.b');
    } catch (e) {
      err = e;
    }
    expect((err as JsonPathError).name).toBe('JsonPathError');
    expect((err as JsonPathError).kind).toBe('syntax');
    expect((err as Error).message).toContain('must start with $');
  });
});

describe('Function: setAtPath', () => {
  it('writes at a reference path without mutating the input', () => {
    const input = { x: { y: 1 } };
    const out = setAtPath(input, compilePath('$.x.z'), 2);
    expect(out).toEqual({ x: { y: 1, z: 2 } });
    expect(input).toEqual({ x: { y: 1 } });
    expect(setAtPath(input, compilePath('$.new.deep'), true)).toEqual({ x: { y: 1 }, new: { deep: true } });
  });

  it('accepts only reference paths as ResultPath', () => {
    expect(isReferencePath('$.a[0].b')).toBe(true);
    expect(isReferencePath('$.a[*]')).toBe(false);
    expect(isReferencePath('$$.Execution')).toBe(false);
  });
});
