// JSONPath Choice rules: comparison operators (and their *Path forms), Is* tests, And/Or/Not.
import type { PathEnv } from './pathEnv.js';
import { lookupPath } from './pathEnv.js';
import { RuntimeFailure } from './StateError.js';

type Rule = Record<string, unknown>;

const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Parses an RFC 3339 timestamp (T separator and a zone required); NaN when invalid. */
export function parseTimestamp(s: unknown): number {
  if (typeof s !== 'string') return NaN;
  const m = ISO_RE.exec(s);
  if (!m) return NaN;
  const [, y, mo, d, h, mi, se] = m;
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > 31 || Number(h) > 23 || Number(mi) > 59 || Number(se) > 59) return NaN;
  const dim = new Date(Date.UTC(Number(y), month, 0)).getUTCDate();
  if (day > dim) return NaN;
  // Keep sub-millisecond precision ordering by adding the fraction as a decimal.
  const frac = m[7] ? Number('0' + m[7]) : 0;
  const base = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${se}${m[8]}`);
  return base + frac * 1000;
}

function stringMatches(value: string, pattern: string): boolean {
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) {
      re += pattern[i + 1]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      i++;
    } else if (c === '*') re += '.*';
    else re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(re + '$', 's').test(value);
}

const COMPARATORS = [
  'StringEquals',
  'StringLessThan',
  'StringGreaterThan',
  'StringLessThanEquals',
  'StringGreaterThanEquals',
  'StringMatches',
  'NumericEquals',
  'NumericLessThan',
  'NumericGreaterThan',
  'NumericLessThanEquals',
  'NumericGreaterThanEquals',
  'BooleanEquals',
  'TimestampEquals',
  'TimestampLessThan',
  'TimestampGreaterThan',
  'TimestampLessThanEquals',
  'TimestampGreaterThanEquals',
  'IsNull',
  'IsPresent',
  'IsNumeric',
  'IsString',
  'IsBoolean',
  'IsTimestamp',
] as const;

/** Every comparison operator name (with and without the Path suffix). */
export const CHOICE_OPERATORS: ReadonlySet<string> = new Set([
  ...COMPARATORS,
  ...COMPARATORS.filter((c) => !c.startsWith('Is') && c !== 'StringMatches').map((c) => c + 'Path'),
]);

/** Evaluates one JSONPath choice rule against the state input. */
export function evaluateChoiceRule(rule: Rule, input: unknown, env: PathEnv): boolean {
  if (Array.isArray(rule.And)) return (rule.And as Rule[]).every((r) => evaluateChoiceRule(r, input, env));
  if (Array.isArray(rule.Or)) return (rule.Or as Rule[]).some((r) => evaluateChoiceRule(r, input, env));
  if (rule.Not && typeof rule.Not === 'object') return !evaluateChoiceRule(rule.Not as Rule, input, env);
  const variable = rule.Variable as string;
  const op = Object.keys(rule).find((k) => CHOICE_OPERATORS.has(k));
  if (!op) throw new RuntimeFailure('States.Runtime', `Choice rule has no comparison operator`);
  const res = lookupPath(variable, input, env);
  if (op === 'IsPresent') return res.found === (rule[op] === true);
  if (!res.found) {
    throw new RuntimeFailure('States.Runtime', `Invalid path '${variable}' : ${res.reason ?? 'No results'}`);
  }
  const v = res.value;
  let operand = rule[op];
  let base = op;
  if (op.endsWith('Path')) {
    base = op.slice(0, -4);
    const r = lookupPath(operand as string, input, env);
    if (!r.found) throw new RuntimeFailure('States.Runtime', `Invalid path '${String(operand)}' : ${r.reason ?? 'No results'}`);
    operand = r.value;
  }
  switch (base) {
    case 'IsNull':
      return (v === null) === operand;
    case 'IsNumeric':
      return (typeof v === 'number') === operand;
    case 'IsString':
      return (typeof v === 'string') === operand;
    case 'IsBoolean':
      return (typeof v === 'boolean') === operand;
    case 'IsTimestamp':
      return !Number.isNaN(parseTimestamp(v)) === operand;
    case 'StringEquals':
      return typeof v === 'string' && typeof operand === 'string' && v === operand;
    case 'StringLessThan':
      return typeof v === 'string' && typeof operand === 'string' && v < operand;
    case 'StringGreaterThan':
      return typeof v === 'string' && typeof operand === 'string' && v > operand;
    case 'StringLessThanEquals':
      return typeof v === 'string' && typeof operand === 'string' && v <= operand;
    case 'StringGreaterThanEquals':
      return typeof v === 'string' && typeof operand === 'string' && v >= operand;
    case 'StringMatches':
      return typeof v === 'string' && typeof operand === 'string' && stringMatches(v, operand);
    case 'NumericEquals':
      return typeof v === 'number' && typeof operand === 'number' && v === operand;
    case 'NumericLessThan':
      return typeof v === 'number' && typeof operand === 'number' && v < operand;
    case 'NumericGreaterThan':
      return typeof v === 'number' && typeof operand === 'number' && v > operand;
    case 'NumericLessThanEquals':
      return typeof v === 'number' && typeof operand === 'number' && v <= operand;
    case 'NumericGreaterThanEquals':
      return typeof v === 'number' && typeof operand === 'number' && v >= operand;
    case 'BooleanEquals':
      return typeof v === 'boolean' && typeof operand === 'boolean' && v === operand;
    default: {
      // Timestamp comparisons: both sides must parse.
      const a = parseTimestamp(v);
      const b = parseTimestamp(operand);
      if (Number.isNaN(a) || Number.isNaN(b)) return false;
      switch (base) {
        case 'TimestampEquals':
          return a === b;
        case 'TimestampLessThan':
          return a < b;
        case 'TimestampGreaterThan':
          return a > b;
        case 'TimestampLessThanEquals':
          return a <= b;
        case 'TimestampGreaterThanEquals':
          return a >= b;
      }
      return false;
    }
  }
}
