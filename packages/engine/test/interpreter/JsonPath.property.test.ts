import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compilePath, evaluatePath, setAtPath } from '../../src/jsonpath/JsonPath.js';
import { executeStateMachine } from '@stepforge/engine';

const key = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,6}$/);
const runs = process.env.STEPFORGE_LONG ? 100_000 : 300;

describe('Function: setAtPath (property)', () => {
  it('writes a value that evaluatePath reads back, leaving other keys alone', () => {
    fc.assert(
      fc.property(fc.dictionary(key, fc.jsonValue()), fc.array(key, { minLength: 1, maxLength: 4 }), fc.jsonValue(), (doc, keys, value) => {
        const path = compilePath('$.' + keys.join('.'));
        const out = setAtPath(doc, path, value);
        expect(evaluatePath(path, out)).toEqual({ found: true, value });
        for (const k of Object.keys(doc)) if (k !== keys[0]) expect((out as Record<string, unknown>)[k]).toEqual(doc[k]);
      }),
      { numRuns: runs },
    );
  });
});

describe('Function: executeStateMachine (property)', () => {
  it('returns the input unchanged through any chain of plain Pass states', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.integer({ min: 1, max: 20 }), async (input, n) => {
        const States: Record<string, unknown> = {};
        for (let i = 0; i < n; i++) States[`S${i}`] = i === n - 1 ? { Type: 'Pass', End: true } : { Type: 'Pass', Next: `S${i + 1}` };
        const r = await executeStateMachine({ StartAt: 'S0', States }, input);
        expect(r.status).toBe('SUCCEEDED');
        expect(r.output).toEqual(input);
        expect(r.events).toHaveLength(2 * n + 2);
      }),
      { numRuns: Math.min(runs, 200) },
    );
  });
});
