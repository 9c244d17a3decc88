// JSONata for `{% … %}` fields: each expression is compiled once and cached, and Step Functions'
// own functions ($partition $range $hash $random $uuid $parse) are registered on it.
import jsonata from 'jsonata';
import { createHash, randomUUID } from 'node:crypto';

/** A `{% expr %}` string's inner expression, or undefined for a plain string. */
export function jsonataBody(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const t = value;
  if (t.length >= 4 && t.startsWith('{%') && t.endsWith('%}')) return t.slice(2, -2).trim();
  return undefined;
}

/** Thrown when an expression fails to compile or evaluate (JSONata's code and message kept). */
export class JsonataError extends Error {
  override readonly name = 'JsonataError';
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly phase: 'compile' | 'evaluate',
  ) {
    super(message);
  }
}

const cache = new Map<string, jsonata.Expression>();

/** Compiles (and caches) an expression; throws JsonataError on a syntax error. */
export function compileJsonata(expr: string): jsonata.Expression {
  let c = cache.get(expr);
  if (c) return c;
  try {
    c = jsonata(expr);
  } catch (e) {
    const err = e as { message?: string; code?: string };
    throw new JsonataError(err.message ?? String(e), err.code, 'compile');
  }
  registerStatesFunctions(c);
  if (cache.size > 10_000) cache.clear();
  cache.set(expr, c);
  return c;
}

// Plain property paths ($states.input.a.b, $var.x) are by far the commonest expressions in compiled
// workflows; reading them directly skips JSONata's async evaluator (same result for non-array steps).
const SIMPLE_PATH = /^\$([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)$/;
const simpleCache = new Map<string, { root: string; keys: string[] } | null>();

function simplePath(expr: string): { root: string; keys: string[] } | null {
  let p = simpleCache.get(expr);
  if (p !== undefined) return p;
  const m = SIMPLE_PATH.exec(expr);
  p = m ? { root: m[1]!, keys: m[2] ? m[2].slice(1).split('.') : [] } : null;
  if (simpleCache.size > 10_000) simpleCache.clear();
  simpleCache.set(expr, p);
  return p;
}

const NO_FAST = Symbol('no-fast-path');

function fastEvaluate(expr: string, bindings: Record<string, unknown>): unknown {
  const p = simplePath(expr);
  if (!p || !Object.prototype.hasOwnProperty.call(bindings, p.root)) return NO_FAST;
  let cur: unknown = bindings[p.root];
  for (const k of p.keys) {
    if (cur === undefined || cur === null) return undefined;
    if (typeof cur !== 'object' || Array.isArray(cur)) return NO_FAST;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

/** Evaluates a cached expression with `$states` and the variables bound. */
export async function evaluateJsonata(expr: string, input: unknown, bindings: Record<string, unknown>): Promise<unknown> {
  const fast = fastEvaluate(expr, bindings);
  if (fast !== NO_FAST) return fast;
  const c = compileJsonata(expr);
  try {
    const v: unknown = await c.evaluate(input, bindings);
    return normalise(v);
  } catch (e) {
    if (e instanceof JsonataError) throw e;
    const err = e as { message?: string; code?: string };
    throw new JsonataError(err.message ?? String(e), err.code, 'evaluate');
  }
}

/** Strips JSONata's sequence markers and turns functions into a marker the caller can reject. */
function normalise(v: unknown): unknown {
  if (v === undefined || v === null) return v;
  if (typeof v === 'function') return FUNCTION_RESULT;
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = normalise(v[i]);
    return out;
  }
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (o._jsonata_lambda || o._jsonata_function) return FUNCTION_RESULT;
    let changed = false;
    for (const k in o) {
      const x = o[k];
      if (x !== null && typeof x === 'object') {
        changed = true;
        break;
      }
      if (typeof x === 'function' || x === undefined) {
        changed = true;
        break;
      }
    }
    if (!changed) return o;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(o)) {
      const x = normalise(o[k]);
      if (x !== undefined) out[k] = x;
    }
    return out;
  }
  return v;
}

/** Marker for an expression that evaluated to a function (an unsupported result type). */
export const FUNCTION_RESULT: unique symbol = Symbol('jsonata-function');

function fail(code: string, message: string): never {
  throw { code, message };
}

function registerStatesFunctions(c: jsonata.Expression): void {
  c.registerFunction('partition', (arr: unknown, size: unknown) => {
    if (!Array.isArray(arr)) fail('States.QueryEvaluationError', 'The first argument of $partition must be an array.');
    if (typeof size !== 'number' || !Number.isInteger(size) || size <= 0)
      fail('States.QueryEvaluationError', 'The chunk size of $partition must be a positive integer.');
    const out: unknown[][] = [];
    for (let i = 0; i < arr.length; i += size) out.push(arr.slice(i, i + size));
    return out;
  });
  c.registerFunction('range', (start: unknown, end: unknown, step: unknown) => {
    if (typeof start !== 'number' || typeof end !== 'number' || typeof step !== 'number' || step === 0) {
      fail('States.QueryEvaluationError', '$range expects numeric start, end and a non-zero step.');
    }
    const out: number[] = [];
    for (let x = start; step > 0 ? x <= end : x >= end; x += step) {
      out.push(x);
      if (out.length > 1000) fail('States.QueryEvaluationError', '$range result exceeds 1000 items.');
    }
    // A one-element result is a singleton sequence in JSONata, which AWS returns unwrapped.
    return out.length === 1 ? out[0] : out;
  });
  c.registerFunction('hash', (data: unknown, alg: unknown) => {
    const algs: Record<string, string> = { MD5: 'md5', 'SHA-1': 'sha1', 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };
    const a = typeof alg === 'string' ? algs[alg] : undefined;
    if (!a) fail('States.QueryEvaluationError', `$hash does not support the algorithm ${String(alg)}.`);
    const text = typeof data === 'string' ? data : JSON.stringify(data);
    return createHash(a).update(text).digest('hex');
  });
  c.registerFunction('random', (seed?: unknown) => {
    if (seed === undefined) return Math.random();
    let s = typeof seed === 'number' ? seed : String(seed).length;
    // Deterministic for a seed (mulberry32), as AWS's seeded $random is.
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  });
  c.registerFunction('uuid', () => randomUUID());
  c.registerFunction('parse', (text: unknown) => {
    if (typeof text !== 'string') fail('States.QueryEvaluationError', '$parse expects a string.');
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return fail('States.QueryEvaluationError', `$parse could not parse: ${text}`);
    }
  });
}
