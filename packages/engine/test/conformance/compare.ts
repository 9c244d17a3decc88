// Placeholder-aware comparison of our results with the recorded (masked) AWS values, following
// the corpus's normalisation.md §6: placeholders in expected strings match any substring, JSON
// text is parsed where the recorder parsed it, and snapshotSkipVerifyPaths are not compared.

const WORD_PLACEHOLDERS = new Set([
  'date',
  'timestamp',
  'RequestId',
  'X-Amzn-Trace-Id',
  'x-amzn-RequestId',
  'x-amzn-requestid',
  'x-amz-crc32',
  'start-time',
  'entered-time',
  'RandomNumberGenerated',
  'map_run_arn',
  'request-id',
]);
const TOKEN_RE =
  /<(?:uuid|json-input|resource|task_token|LogResult|m-d5-of-message-body|m-d5-of-message-attributes|sender-id|message_id|receipt-handle|task-handle|sequence-number|[a-z][a-z0-9-]*):\d+>|<MapRunArnPart\d_\d+idx>|<timestamp>|<request-id>|<request_id>|<extended_request_id>|<start-time>|<entered-time>/g;
const ISO_RE = /[1-9]\d{3}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:?(?:\d{2})?)/g;

/** STEPFORGE_CONFORMANCE_LENIENT_JSON_TEXT=1 compares object JSON text as parsed values (separators and key order ignored). */
const EXACT_JSON_TEXT = !process.env.STEPFORGE_CONFORMANCE_LENIENT_JSON_TEXT;

/** A difference found while comparing, with a path like `events[3].stateExitedEventDetails.output`. */
export interface Mismatch {
  path: string;
  expected: unknown;
  actual: unknown;
}

const patternCache = new Map<string, RegExp | null>();

function stringPattern(expected: string): RegExp | null {
  let p = patternCache.get(expected);
  if (p !== undefined) return p;
  if (!TOKEN_RE.test(expected) && !/\bdate\b/.test(expected)) {
    TOKEN_RE.lastIndex = 0;
    patternCache.set(expected, null);
    return null;
  }
  TOKEN_RE.lastIndex = 0;
  const parts = expected.split(new RegExp(`${TOKEN_RE.source}|\\bdate\\b`, 'g'));
  const re = new RegExp('^' + parts.map((x) => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]*?') + '$');
  patternCache.set(expected, re);
  return re;
}

function tryParse(s: string): { ok: boolean; value?: unknown } {
  try {
    return { ok: true, value: JSON.parse(s) };
  } catch {
    return { ok: false };
  }
}

/** Masks ISO date-times in our own text the way the recorder did (so `date` placeholders line up). */
export function maskDates(s: string): string {
  return s.replace(ISO_RE, 'date');
}

/** Compares expected (recorded) and actual values; pushes every mismatch. */
export function compareValues(expected: unknown, actual: unknown, path: string, out: Mismatch[], skip: (path: string) => boolean): void {
  if (skip(path)) return;
  if (typeof expected === 'string') {
    if (WORD_PLACEHOLDERS.has(expected)) return;
    if (typeof actual === 'string') {
      if (expected === actual) return;
      const re = stringPattern(expected);
      if (re && re.test(actual)) return;
      if (maskDates(actual) === expected) return;
      // Both JSON text (arrays, scalars, Python floats like 0.0): compare the parsed values.
      const e = tryParse(expected);
      const a = tryParse(actual);
      // An object's JSON text that the recorder kept as text (a Lambda error Cause inside a state
      // output) is what AWS sent byte for byte: separators and key order are part of it, since a
      // workflow can compare or search that text. The top-level expect.cause is the exception: the
      // recorder parsed it and the corpus wrote it back in compact form (normalisation.md §1).
      if (
        EXACT_JSON_TEXT &&
        path !== 'cause' &&
        e.ok &&
        a.ok &&
        e.value !== null &&
        typeof e.value === 'object' &&
        !Array.isArray(e.value) &&
        expected.startsWith('{')
      ) {
        out.push({ path, expected, actual });
        return;
      }
      if (e.ok && a.ok && (typeof e.value === 'object' || typeof a.value === 'object' || e.value === a.value)) {
        if (typeof e.value === 'object' || typeof a.value === 'object') return compareValues(e.value, a.value, path, out, skip);
        return;
      }
      if (e.ok && a.ok && typeof e.value === 'string' && typeof a.value === 'string')
        return compareValues(e.value, a.value, path, out, skip);
      out.push({ path, expected, actual });
      return;
    }
    // A masked number or other scalar (e.g. a timestamp key holding epoch ms).
    if (stringPattern(expected) && expected.startsWith('<') && expected.endsWith('>')) return;
    out.push({ path, expected, actual });
    return;
  }
  if (typeof actual === 'string' && expected !== null && typeof expected === 'object') {
    const a = tryParse(actual);
    if (a.ok) return compareValues(expected, a.value, path, out, skip);
    out.push({ path, expected, actual });
    return;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) {
      out.push({ path, expected, actual });
      return;
    }
    if (expected.length !== actual.length) out.push({ path: `${path}.length`, expected: expected.length, actual: actual.length });
    const n = Math.min(expected.length, actual.length);
    for (let i = 0; i < n; i++) compareValues(expected[i], actual[i], `${path}[${i}]`, out, skip);
    return;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) {
      out.push({ path, expected, actual });
      return;
    }
    const e = expected as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    for (const k of new Set([...Object.keys(e), ...Object.keys(a)])) {
      const p = path ? `${path}.${k}` : k;
      if (k === 'Content-Length') continue; // counts the real, unmasked function name (normalisation.md §6.4)
      if (!(k in e)) {
        if (!skip(p)) out.push({ path: p, expected: undefined, actual: a[k] });
      } else if (!(k in a)) {
        if (!skip(p)) out.push({ path: p, expected: e[k], actual: undefined });
      } else compareValues(e[k], a[k], p, out, skip);
    }
    return;
  }
  if (typeof expected === 'number' && typeof actual === 'number' && expected === actual) return;
  // Some tests' transformers parsed scalar JSON text in event outputs (extraNormalisers: GenericTransformer).
  if (typeof actual === 'string' && (expected === null || typeof expected === 'number' || typeof expected === 'boolean')) {
    const a = tryParse(actual);
    if (a.ok && a.value === expected) return;
  }
  if (expected === actual) return;
  out.push({ path, expected, actual });
}

/** A predicate for snapshotSkipVerifyPaths (`$..Cause`, `$..events[4].previousEventId`, …). */
export function skipPredicate(paths: readonly string[]): (path: string) => boolean {
  const res = paths.map((p) => {
    const body = p
      .replace(/^\$\.\.?/, '')
      .split('..')
      .map((seg) => seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    return new RegExp(`(^|\\.|\\])${body}(\\.|\\[|$)`);
  });
  return (path) => res.some((r) => r.test(path));
}
