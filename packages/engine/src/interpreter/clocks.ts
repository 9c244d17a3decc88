// Time sources. The system clock sleeps for real; the virtual clock jumps straight to the next
// due timer once everything runnable has run, so Wait/Retry/timeouts cost no real time while
// keeping their order (a 5 s task timeout still fires before a 60 s handler finishes).
import type { Clock } from './types.js';

/** Real time: Date.now and setTimeout. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (ms <= 0 || signal?.aborted) return resolve();
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
};

interface Timer {
  at: number;
  seq: number;
  resolve: () => void;
}

/** A clock whose sleeps complete in virtual time, earliest first (for tests and conformance). */
export function createVirtualClock(start = Date.UTC(2024, 0, 1)): Clock & { advanced(): number } {
  let now = start;
  let seq = 0;
  const timers: Timer[] = [];
  let scheduled = false;
  const drain = () => {
    scheduled = false;
    if (timers.length === 0) return;
    timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
    const t = timers.shift()!;
    if (t.at > now) now = t.at;
    t.resolve();
    schedule();
  };
  const schedule = () => {
    if (scheduled || timers.length === 0) return;
    scheduled = true;
    // Two macrotask hops let promise chains and in-process handlers settle before time jumps.
    setImmediate(() => setImmediate(drain));
  };
  return {
    now: () => now,
    advanced: () => now - start,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const timer: Timer = { at: now + Math.max(0, ms), seq: seq++, resolve: () => done() };
        const done = () => {
          const i = timers.indexOf(timer);
          if (i >= 0) timers.splice(i, 1);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        signal?.addEventListener('abort', done, { once: true });
        timers.push(timer);
        schedule();
      }),
  };
}
