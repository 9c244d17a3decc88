import { describe, expect, it } from 'vitest';
import { MAX_INPUT_DEPTH, inputDepthError } from './runStart.js';

const nested = (levels: number): unknown => JSON.parse(`${'['.repeat(levels)}1${']'.repeat(levels)}`);

describe('Function: inputDepthError', () => {
  it('takes input nested up to the limit, and refuses one level more', () => {
    expect(MAX_INPUT_DEPTH).toBe(32);
    expect(inputDepthError({ x: nested(31) })).toBeUndefined();
    expect(inputDepthError({ x: nested(32) })).toBe(
      "the input is nested more than 32 levels deep (objects and arrays inside one another); a run's input may nest at most 32 levels",
    );
    expect(inputDepthError('text')).toBeUndefined();
    expect(inputDepthError({ a: [{ b: {} }], c: null })).toBeUndefined();
  });

  it('measures 100,000 levels without overflowing the stack', () => {
    const text = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    expect(inputDepthError(JSON.parse(text))).toMatch(/^the input is nested more than 32 levels deep/);
  });
});
