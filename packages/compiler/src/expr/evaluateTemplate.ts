import { StepforgeError } from '@stepforge/contract';
import type { Expr, PathExpr, Template } from './ExpressionAst.js';

/** What expressions read: the run input and each finished step's output (`steps.<name>.output`). */
export interface ExpressionContext {
  readonly input?: unknown;
  readonly steps?: Readonly<Record<string, { readonly output?: unknown } | undefined>>;
}

// Brackets must pair up: `[offline:echo] {…}` (text that merely starts with `[`) is text, not JSON.
const JSON_OBJECT = /^[ \t\n\r]*\{[\s\S]*\}[ \t\n\r]*$/;
const JSON_ARRAY = /^[ \t\n\r]*\[[\s\S]*\][ \t\n\r]*$/;

/**
 * A string shaped like a JSON object or array (first non-blank char `{` and last `}`, or `[` and `]`) is parsed
 * before traversal; a string of that shape that is not valid JSON is an `expression_eval` error, the
 * same outcome as Step Functions' `$parse` failing in the JSONata translation.
 */
export function parseJsonLike(v: unknown): unknown {
  if (typeof v !== 'string' || !(JSON_OBJECT.test(v) || JSON_ARRAY.test(v))) return v;
  try {
    return JSON.parse(v) as unknown;
  } catch (e) {
    throw new StepforgeError('expression_eval', `cannot traverse a string that is not valid JSON: ${(e as Error).message}`);
  }
}

/** One traversal step: a field of an object or an index of an array; anything else is missing. */
export function stepInto(v: unknown, key: string | number): unknown {
  const c = parseJsonLike(v);
  if (typeof key === 'number') return Array.isArray(c) && key < c.length ? c[key] : undefined;
  if (c !== null && typeof c === 'object' && !Array.isArray(c) && Object.prototype.hasOwnProperty.call(c, key)) {
    return (c as Record<string, unknown>)[key];
  }
  return undefined;
}

/** Truthiness: missing, null, false, 0, '', [] and {} are false; everything else is true. */
export function isTruthy(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === 'string') return v !== '';
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return false;
}

// JSONata's $string writes non-integers with 15 significant digits; doing the same keeps both evaluators equal.
function normaliseNumber(n: number): number {
  return Number.isInteger(n) ? n : Number(n.toPrecision(15));
}

/** The string form used for interpolation: strings as is, null/missing blank, other values as JSON. */
export function stringForm(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && !Number.isFinite(v)) {
    throw new StepforgeError('expression_eval', 'cannot convert a non-finite number to a string');
  }
  return JSON.stringify(v, (_k, val: unknown) => (typeof val === 'number' ? normaliseNumber(val) : val)) ?? '';
}

/** A canonical text for deep equality of arrays and objects (sorted keys, JSON-quoted strings, normalised numbers). */
export function canonicalForm(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalForm).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalForm((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === undefined || v === null) return 'null';
  return stringForm(v);
}

function typeOf(v: unknown): string {
  if (v === undefined || v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** `==`: missing equals null; same type required; arrays and objects compare deeply. */
export function valuesEqual(a: unknown, b: unknown): boolean {
  const ta = typeOf(a);
  if (ta !== typeOf(b)) return false;
  if (ta === 'null') return true;
  if (ta === 'array' || ta === 'object') return canonicalForm(a) === canonicalForm(b);
  return a === b;
}

/** `<` `>` `<=` `>=`: defined for two numbers or two strings; false otherwise. */
export function compareValues(op: '<' | '>' | '<=' | '>=', a: unknown, b: unknown): boolean {
  const ok = (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string');
  if (!ok) return false;
  const x = a as number | string;
  const y = b as number | string;
  switch (op) {
    case '<':
      return x < y;
    case '>':
      return x > y;
    case '<=':
      return x <= y;
    case '>=':
      return x >= y;
  }
}

/** Resolves a path against the context; `undefined` when it does not resolve. */
export function resolvePath(path: PathExpr, ctx: ExpressionContext): unknown {
  let v: unknown;
  if (path.root.kind === 'input') v = ctx.input;
  else {
    const s = ctx.steps && Object.prototype.hasOwnProperty.call(ctx.steps, path.root.step) ? ctx.steps[path.root.step] : undefined;
    v = s?.output;
  }
  for (const seg of path.segments) {
    if (v === undefined) return undefined;
    v = stepInto(v, seg);
  }
  return v;
}

/** Evaluates one expression; `undefined` means "does not resolve". */
export function evaluateExpression(e: Expr, ctx: ExpressionContext): unknown {
  switch (e.kind) {
    case 'literal':
      return Array.isArray(e.value) ? [] : e.value !== null && typeof e.value === 'object' ? {} : e.value;
    case 'path':
      return resolvePath(e, ctx);
    case 'default': {
      const v = evaluateExpression(e.expr, ctx);
      return v === undefined || v === null ? evaluateExpression(e.fallback, ctx) : v;
    }
    case 'or': {
      const l = evaluateExpression(e.left, ctx);
      return isTruthy(l) ? l : evaluateExpression(e.right, ctx);
    }
    case 'and':
      return isTruthy(evaluateExpression(e.left, ctx)) ? isTruthy(evaluateExpression(e.right, ctx)) : false;
    case 'compare': {
      const l = evaluateExpression(e.left, ctx);
      const r = evaluateExpression(e.right, ctx);
      if (e.op === '==') return valuesEqual(l, r);
      if (e.op === '!=') return !valuesEqual(l, r);
      return compareValues(e.op, l, r);
    }
  }
}

/**
 * Evaluates a template: a whole-string expression keeps its type (missing becomes null); otherwise the
 * parts are concatenated, each expression in its string form (null and missing become blank).
 */
export function evaluateTemplate(t: Template, ctx: ExpressionContext): unknown {
  if (t.whole) {
    const v = evaluateExpression((t.parts[0] as { expr: Expr }).expr, ctx);
    return v === undefined ? null : v;
  }
  let out = '';
  for (const p of t.parts) out += p.kind === 'text' ? p.value : stringForm(evaluateExpression(p.expr, ctx));
  return out;
}

/** A template as a `when`/`condition`: its truthiness. */
export function evaluateCondition(t: Template, ctx: ExpressionContext): boolean {
  return isTruthy(evaluateTemplate(t, ctx));
}
