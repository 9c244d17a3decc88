import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { ExecutionLimitExceeded, InvalidExecutionInput, SFNServiceException } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { runStarter, starterEnded, startRefused } from '../src/runs/orphanedStart.js';

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

/**
 * A run's starter is signed `pid@host/start`: a pid the host has since given to another process
 * (they wrap at 32,768 on a busy host) does not keep an orphaned start waiting for a starter that ended.
 */
describe('Function: starterEnded', () => {
  it('tells a live starter from an ended one, and from another process that now has its pid', async () => {
    const me = runStarter();
    expect(me).toMatch(new RegExp(`^${process.pid}@${hostname()}/\\d+$`));
    expect(starterEnded(me)).toBe(false);
    // This process's pid, signed by a process that started at another time.
    expect(starterEnded(`${process.pid}@${hostname()}/1`)).toBe(true);
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      await new Promise((r) => child.once('spawn', r));
      const start = readFileSync(`/proc/${child.pid}/stat`, 'latin1');
      const ticks = start.slice(start.lastIndexOf(')') + 2).split(' ')[19];
      expect(starterEnded(`${child.pid}@${hostname()}/${ticks}`)).toBe(false);
      expect(starterEnded(`${child.pid}@${hostname()}/${Number(ticks) + 1}`)).toBe(true);
      // Signed before starters carried their start: the pid alone.
      expect(starterEnded(`${child.pid}@${hostname()}`)).toBe(false);
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    expect(starterEnded(`${child.pid}@${hostname()}`)).toBe(true);
    expect(starterEnded(`${child.pid}@another-host/5`)).toBeUndefined();
  });
});
