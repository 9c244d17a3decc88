import { describe, expect, it } from 'vitest';
import { MAX_EXECUTION_INPUT_BYTES, executionInputSizeError, idempotencyKeyError } from '@stepforge/contract';

describe('Function: executionInputSizeError', () => {
  it('accepts an input of exactly 256 KiB of UTF-8 and refuses one byte more, counting bytes, not characters', () => {
    expect(MAX_EXECUTION_INPUT_BYTES).toBe(262144);
    expect(executionInputSizeError('a'.repeat(262144))).toBeUndefined();
    expect(executionInputSizeError('a'.repeat(262145))).toBe(
      "the run's input is 256.0 KiB (262145 bytes) as Step Functions execution input; Step Functions takes at most 256 KiB (262144 bytes)",
    );
    // 'é' is 2 bytes in UTF-8: 131073 of them are over the limit though far fewer characters.
    expect(executionInputSizeError('é'.repeat(131072))).toBeUndefined();
    expect(executionInputSizeError('é'.repeat(131073))).toMatch(/^the run's input is 256\.0 KiB \(262146 bytes\)/);
    expect(executionInputSizeError('x'.repeat(10 * 1024 * 1024))).toMatch(/^the run's input is 10\.0 MiB \(10485760 bytes\)/);
  });
});

describe('Function: idempotencyKeyError', () => {
  it('takes a key of 1 to 256 characters', () => {
    expect(idempotencyKeyError('k')).toBeUndefined();
    expect(idempotencyKeyError('k'.repeat(256))).toBeUndefined();
    expect(idempotencyKeyError('')).toBe('an idempotency key cannot be empty');
    expect(idempotencyKeyError('k'.repeat(257))).toBe('an idempotency key is at most 256 characters, got 257');
  });
});
