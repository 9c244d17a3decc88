// Durations as the documents write them, read one way by every front-end and by the lowering,
// so that what validates is exactly what runs.

/**
 * Parses a duration from the source (`2`, `"500ms"`, `"3s"`, `"1m"`) into seconds.
 * Returns undefined when it is not a duration.
 */
export function parseDurationSeconds(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return v;
  if (typeof v !== 'string') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(v);
  if (!m) return undefined;
  const n = Number(m[1]);
  switch (m[2]) {
    case 'ms':
      return n / 1000;
    case 'm':
      return n * 60;
    case 'h':
      return n * 3600;
    default:
      return n;
  }
}
