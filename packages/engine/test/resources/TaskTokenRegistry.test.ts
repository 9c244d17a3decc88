import { describe, expect, it } from 'vitest';
import { TaskTokenRegistry, isSfnApiError } from '@stepforge/engine';

function apiErrorType(f: () => void): string {
  try {
    f();
  } catch (e) {
    if (isSfnApiError(e)) return e.type;
    throw e;
  }
  throw new Error('expected an SfnApiError');
}

describe('Class: TaskTokenRegistry', () => {
  describe('Method: succeed', () => {
    it('resolves the waiting task with the parsed output, then refuses the spent token with TaskTimedOut', async () => {
      const r = new TaskTokenRegistry();
      const waiting = r.wait('t1', new AbortController().signal, () => undefined);
      expect(r.size).toBe(1);
      r.succeed('t1', '{"a":[1,2]}');
      await expect(waiting).resolves.toEqual({ a: [1, 2] });
      expect(r.size).toBe(0);
      expect(apiErrorType(() => r.succeed('t1', '{}'))).toBe('TaskTimedOut');
    });

    it('refuses output that is not JSON (InvalidOutput) and keeps the task waiting', async () => {
      const r = new TaskTokenRegistry();
      const waiting = r.wait('t2', new AbortController().signal, () => undefined);
      expect(apiErrorType(() => r.succeed('t2', 'not json'))).toBe('InvalidOutput');
      r.succeed('t2', '"ok"');
      await expect(waiting).resolves.toBe('ok');
    });

    it('refuses unknown tokens with TaskDoesNotExist and empty ones with InvalidToken', () => {
      const r = new TaskTokenRegistry();
      expect(apiErrorType(() => r.succeed('nope', '{}'))).toBe('TaskDoesNotExist');
      expect(apiErrorType(() => r.fail(''))).toBe('InvalidToken');
    });
  });

  describe('Method: fail', () => {
    it('rejects with a TaskFailure carrying the error and cause', async () => {
      const r = new TaskTokenRegistry();
      const waiting = r.wait('t3', new AbortController().signal, () => undefined);
      r.fail('t3', 'Denied', 'no budget');
      await expect(waiting).rejects.toMatchObject({ name: 'TaskFailure', error: 'Denied', cause: 'no budget' });
    });

    it('marks an absent error and cause as null', async () => {
      const r = new TaskTokenRegistry();
      const waiting = r.wait('t4', new AbortController().signal, () => undefined);
      r.fail('t4');
      await expect(waiting).rejects.toMatchObject({ name: 'TaskFailure', nullError: true, nullCause: true });
    });
  });

  describe('Method: heartbeat', () => {
    it("calls the waiting task's heartbeat hook", () => {
      const r = new TaskTokenRegistry();
      let beats = 0;
      void r.wait('t5', new AbortController().signal, () => beats++);
      r.heartbeat('t5');
      r.heartbeat('t5');
      expect(beats).toBe(2);
      expect(apiErrorType(() => r.heartbeat('other'))).toBe('TaskDoesNotExist');
    });
  });

  describe('Method: wait', () => {
    it('rejects with the abort reason when the task is aborted, and closes the token', async () => {
      const r = new TaskTokenRegistry();
      const ac = new AbortController();
      const waiting = r.wait('t6', ac.signal, () => undefined);
      ac.abort({ error: 'States.Timeout' });
      await expect(waiting).rejects.toEqual({ error: 'States.Timeout' });
      expect(apiErrorType(() => r.succeed('t6', '{}'))).toBe('TaskTimedOut');
    });

    it('holds a completion for a live execution that has not re-registered its token yet (resume race)', async () => {
      const r = new TaskTokenRegistry((token) => token.startsWith('live.'));
      r.succeed('live.1', '{"early":true}');
      expect(apiErrorType(() => r.succeed('dead.1', '{}'))).toBe('TaskDoesNotExist');
      await expect(r.wait('live.1', new AbortController().signal, () => undefined)).resolves.toEqual({ early: true });
    });
  });
});
