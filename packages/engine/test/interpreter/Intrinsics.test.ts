import { describe, expect, it } from 'vitest';
import { evaluateIntrinsic, javaString, parseIntrinsic } from '../../src/intrinsics/Intrinsics.js';

const run = (expr: string, data: Record<string, unknown> = {}) => evaluateIntrinsic(parseIntrinsic(expr), (p) => data[p]);

describe('Function: evaluateIntrinsic', () => {
  it('formats with Java-style rendering of non-string arguments', () => {
    expect(run("States.Format('a={} b={}', $.a, $.b)", { '$.a': 'x', '$.b': { k: [1, 2] } })).toBe('a=x b={k=[1, 2]}');
    expect(javaString(null)).toBe('null');
  });

  it('implements the array functions', () => {
    expect(run('States.ArrayPartition(States.Array(1, 2, 3), 2)')).toEqual([[1, 2], [3]]);
    expect(run('States.ArrayRange(1, 9, 2)')).toEqual([1, 3, 5, 7, 9]);
    expect(run('States.ArrayContains(States.Array(1, 2), 2)')).toBe(true);
    expect(run('States.ArrayGetItem(States.Array(5, 6), 1)')).toBe(6);
    expect(run('States.ArrayLength(States.Array(5, 6))')).toBe(2);
    expect(run('States.ArrayUnique(States.Array(1, 1, 2))')).toEqual([1, 2]);
  });

  it('implements the string, JSON, math, hash and encoding functions', () => {
    expect(run("States.StringSplit('a,b;;c', ',;')")).toEqual(['a', 'b', 'c']);
    expect(run('States.StringToJson(\'{"a":1}\')')).toEqual({ a: 1 });
    expect(run('States.JsonToString($.v)', { '$.v': { a: [1] } })).toBe('{"a":[1]}');
    expect(run('States.MathAdd(1.5, 1.49)')).toBe(3);
    expect(run("States.Hash('input data', 'SHA-1')")).toBe('aaff4a450a104cd177d28d18d74485e8cae074b7');
    expect(run("States.Base64Decode(States.Base64Encode('héllo'))")).toBe('héllo');
    expect(run('States.JsonMerge($.a, $.b, false)', { '$.a': { x: 1, y: 1 }, '$.b': { y: 2 } })).toEqual({ x: 1, y: 2 });
    expect(run('States.UUID()')).toMatch(/^[0-9a-f-]{36}$/);
    const r = run('States.MathRandom(1, 5)') as number;
    expect(r >= 1 && r < 5).toBe(true);
  });

  it('fails with States.IntrinsicFailure on bad arguments', () => {
    let err: unknown;
    try {
      run('States.ArrayGetItem(States.Array(1), 3)');
    } catch (e) {
      err = e;
    }
    expect((err as { error: string }).error).toBe('States.IntrinsicFailure');
    expect((err as { cause: string }).cause).toContain('out of bounds');
  });

  it('rejects an unknown function at parse time', () => {
    expect(() => parseIntrinsic('States.Nope(1)')).toThrowError(/unknown function States.Nope/);
  });
});
