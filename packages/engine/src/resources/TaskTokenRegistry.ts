import { SfnApiError } from '../executions/SfnApiError.js';
import { TaskFailure } from '../interpreter/TaskFailure.js';

interface Waiter {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  heartbeat(): void;
}

type Completion = { kind: 'success'; output: unknown } | { kind: 'failure'; error: string | null; cause: string | null };

/** How many closed tokens to remember so late callers get TaskTimedOut rather than TaskDoesNotExist. */
const CLOSED_MEMORY = 10_000;

/**
 * The `.waitForTaskToken` rendezvous: a task registers its token and waits; SendTaskSuccess,
 * SendTaskFailure and SendTaskHeartbeat (from the API server or in-process callers) complete it.
 */
export class TaskTokenRegistry {
  private readonly waiting = new Map<string, Waiter>();
  private readonly closed = new Set<string>();
  /** Completions that arrived while their execution was resuming and had not re-registered yet. */
  private readonly early = new Map<string, Completion>();

  /**
   * @param isLive tells whether a token not (yet) waiting belongs to a live execution, so a
   *   completion that races a resume is kept for it instead of being refused.
   */
  constructor(private readonly isLive: (token: string) => boolean = () => false) {}

  /**
   * Waits for the token's completion. Call it before the message carrying the token leaves, so
   * an instant answer is not lost. Rejects with the signal's reason when the task is aborted.
   */
  wait(token: string, signal: AbortSignal, onHeartbeat: () => void): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const early = this.early.get(token);
      if (early) {
        this.early.delete(token);
        this.closed.add(token);
        settle(early, resolve, reject);
        return;
      }
      const finish = () => {
        this.waiting.delete(token);
        this.remember(token);
        signal.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        finish();
        reject(signal.reason);
      };
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.set(token, {
        resolve: (v) => {
          finish();
          resolve(v);
        },
        reject: (e) => {
          finish();
          reject(e);
        },
        heartbeat: onHeartbeat,
      });
    });
  }

  /** Stops waiting for a token without completing it (the message could not be sent). */
  cancel(token: string): void {
    this.waiting.delete(token);
  }

  /** SendTaskSuccess: `output` is the JSON text the caller sent. */
  succeed(token: string, output: string): void {
    let value: unknown;
    try {
      value = JSON.parse(output);
    } catch {
      throw new SfnApiError('InvalidOutput', 'Invalid output: the output must be valid JSON.');
    }
    this.complete(token, { kind: 'success', output: value });
  }

  /** SendTaskFailure; AWS lets both error and cause be absent (they surface as null). */
  fail(token: string, error?: string, cause?: string): void {
    this.complete(token, { kind: 'failure', error: error ?? null, cause: cause ?? null });
  }

  /** SendTaskHeartbeat. */
  heartbeat(token: string): void {
    const w = this.waiting.get(token);
    if (w) return w.heartbeat();
    if (this.isLive(token)) return;
    throw this.unknown(token);
  }

  /** How many tasks are waiting (for tests and `serve` status). */
  get size(): number {
    return this.waiting.size;
  }

  private complete(token: string, c: Completion): void {
    checkToken(token);
    const w = this.waiting.get(token);
    if (w) return settle(c, w.resolve, w.reject);
    if (!this.closed.has(token) && this.isLive(token)) {
      this.early.set(token, c);
      return;
    }
    throw this.unknown(token);
  }

  private unknown(token: string): SfnApiError {
    checkToken(token);
    if (this.closed.has(token))
      return new SfnApiError(
        'TaskTimedOut',
        'Task Timed Out: the task token has either expired or the task associated with the token has already been closed.',
      );
    return new SfnApiError('TaskDoesNotExist', 'Task does not exist: no task is waiting for this token.');
  }

  private remember(token: string): void {
    this.closed.add(token);
    if (this.closed.size > CLOSED_MEMORY) {
      const oldest = this.closed.values().next().value;
      if (oldest !== undefined) this.closed.delete(oldest);
    }
  }
}

function checkToken(token: string): void {
  if (typeof token !== 'string' || token.length === 0 || token.length > 2048) {
    throw new SfnApiError('InvalidToken', 'Invalid Token: the task token must be a non-empty string of at most 2048 characters.');
  }
}

function settle(c: Completion, resolve: (v: unknown) => void, reject: (e: unknown) => void): void {
  if (c.kind === 'success') resolve(c.output);
  // A failure without an Error name still has to be catchable by States.ALL; TaskFailure needs a
  // string, so the null pair rides along in `details` for the interpreter to surface as null.
  else
    reject(
      Object.assign(new TaskFailure(c.error ?? '', c.cause ?? undefined), { nullError: c.error === null, nullCause: c.cause === null }),
    );
}
