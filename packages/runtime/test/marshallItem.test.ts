import { describe, expect, it } from 'vitest';
import { marshallItem, unmarshallItem } from '../src/persistence/Db.js';

describe('Function: marshallItem', () => {
  it('converts plain values to attribute values as the DocumentClient does, dropping undefined', () => {
    class Usage {
      constructor(readonly inputTokens: number) {}
    }
    const item = {
      s: 'x',
      n: 1.5,
      b: false,
      z: null,
      l: ['a', 2, undefined],
      m: { k: 'v', gone: undefined },
      u: new Usage(3),
      gone: undefined,
    };
    expect(marshallItem(item)).toEqual({
      s: { S: 'x' },
      n: { N: '1.5' },
      b: { BOOL: false },
      z: { NULL: true },
      l: { L: [{ S: 'a' }, { N: '2' }] },
      m: { M: { k: { S: 'v' } } },
      u: { M: { inputTokens: { N: '3' } } },
    });
    expect(unmarshallItem(marshallItem(item))).toEqual({
      s: 'x',
      n: 1.5,
      b: false,
      z: null,
      l: ['a', 2],
      m: { k: 'v' },
      u: { inputTokens: 3 },
    });
  });

  it('refuses a number DynamoDB cannot store', () => {
    expect(() => marshallItem({ n: Number.NaN })).toThrow('cannot store the number NaN in DynamoDB');
  });
});
