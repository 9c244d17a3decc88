// Wraps the real step handlers to count calls per step id and, on demand, fail a step — the only
// test double in the end-to-end suite, and it still calls the real handler when not failing.
import type { LocalHandlers } from '../../../packages/embedded/src/functionsRuntime.js';

/** Call counts per `step.id` of the envelope, and the failure switch. */
export interface HandlerProbe {
  readonly calls: Map<string, number>;
  /** Step ids whose handler call throws `ForcedFailure` instead of running. */
  readonly failing: Set<string>;
  total(): number;
  reset(): void;
  wrap(handlers: LocalHandlers): LocalHandlers;
}

/** A fresh probe. */
export function handlerProbe(): HandlerProbe {
  const calls = new Map<string, number>();
  const failing = new Set<string>();
  return {
    calls,
    failing,
    total: () => [...calls.values()].reduce((a, b) => a + b, 0),
    reset: () => calls.clear(),
    wrap(handlers) {
      const out: Record<string, (event: unknown, context: unknown) => unknown> = {};
      for (const [name, h] of Object.entries(handlers)) {
        if (typeof h !== 'function') continue;
        out[name] = async (event: unknown, context: unknown) => {
          const id = (event as { step?: { id?: string } }).step?.id ?? '?';
          calls.set(id, (calls.get(id) ?? 0) + 1);
          if (failing.has(id)) throw Object.assign(new Error(`forced failure of step ${id}`), { name: 'ForcedFailure' });
          return h(event, context);
        };
      }
      return out;
    },
  };
}
