import { describe, expect, it } from 'vitest';
import { isLostConnection } from '../src/isLostConnection.js';

describe('Function: isLostConnection', () => {
  it('knows a refused or cut connection by its code, also on what caused the error', () => {
    expect(isLostConnection(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))).toBe(true);
    // LoopbackHttpHandler reports a connection closed under a request as ECONNRESET, undici's error as the cause.
    expect(
      isLostConnection(new Error('wrapped', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) })),
    ).toBe(true);
    expect(isLostConnection(Object.assign(new Error('no such run'), { name: 'ExecutionDoesNotExist' }))).toBe(false);
    expect(isLostConnection(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }))).toBe(false);
    expect(isLostConnection(undefined)).toBe(false);
  });
});
