import { ExecutionLimitExceeded, InvalidExecutionInput, SFNServiceException } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { startRefused } from '../src/runs/orphanedStart.js';

/**
 * A run whose StartExecution failed is failed only when the service refused the start; after a
 * lost connection the execution may have started, and the run is left for its finder to resolve.
 */
describe('Function: startRefused', () => {
  it('is true for an API error the service answered (4xx, client fault)', () => {
    expect(startRefused(new ExecutionLimitExceeded({ $metadata: { httpStatusCode: 400 }, message: 'too many' }))).toBe(true);
    expect(startRefused(new InvalidExecutionInput({ $metadata: { httpStatusCode: 400 }, message: 'bad input' }))).toBe(true);
  });

  it('is false for a lost connection, a timeout or a server fault', () => {
    expect(startRefused(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4010'), { code: 'ECONNREFUSED' }))).toBe(false);
    expect(startRefused(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET', $metadata: {} }))).toBe(false);
    expect(startRefused(new SFNServiceException({ name: 'InternalFailure', $fault: 'server', $metadata: { httpStatusCode: 500 } }))).toBe(
      false,
    );
    expect(startRefused(undefined)).toBe(false);
  });
});
