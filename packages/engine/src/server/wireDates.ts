/**
 * Keys whose values are dates. The engine keeps them as epoch milliseconds; the wire format (AWS
 * JSON 1.0) sends epoch seconds, and the AWS SDK hands them to its caller as `Date`s.
 */
const DATE_KEYS = new Set(['creationDate', 'updateDate', 'startDate', 'stopDate', 'redriveDate', 'timestamp']);

/** Converts date fields (epoch ms) to epoch seconds, recursively, as the API server sends a response. */
export function toWire(v: unknown, key?: string): unknown {
  return converted(v, key, (ms) => ms / 1000);
}

/**
 * A response as the AWS SDK's client returns it to its caller: a copy, with date fields (epoch ms)
 * as `Date`s and absent fields left out. For callers in the engine's own process, which take an
 * answer from the ExecutionManager without the HTTP round trip: the SDK parses the wire's epoch
 * seconds into the same milliseconds.
 */
export function asSdkOutput(v: unknown, key?: string): unknown {
  return converted(v, key, (ms) => new Date(ms));
}

function converted(v: unknown, key: string | undefined, date: (ms: number) => unknown): unknown {
  if (key !== undefined && DATE_KEYS.has(key) && typeof v === 'number') return date(v);
  if (Array.isArray(v)) return v.map((x) => converted(x, undefined, date));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = converted(x, k, date);
    return out;
  }
  return v;
}
