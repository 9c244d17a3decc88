// A seeded generator of `${ }` expressions and evaluation contexts, shared by the differential test
// (TS evaluator vs JSONata translation) and the fuzz test. Deterministic for a given seed.

import { mulberry32 } from '../../../../test/support/mulberry32.js';

/** Mulberry32: a tiny seeded PRNG so failures reproduce. */
export const rng = mulberry32;

export type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** Field names used in contexts and paths (including ones that never resolve). */
export const KEYS = ['a', 'b', 'name', 'items', 'n', 'flag', 'obj', 'json', 'empty', 'odd key', 'missing'] as const;
export const STEP_NAMES = ['plan', 'fetch', 'judge', 'nothing'] as const;

const STRINGS = [
  '[oops]',
  '{"a":}',
  '',
  'x',
  'hello world',
  'true',
  '0',
  '{"a":1,"items":[1,{"b":"deep"}]}',
  '[1,2,{"name":"n"}]',
  '{not json}',
  ' [ ] ',
  'a"quote',
  'ünï',
  '{}',
  '[offline:echo] {"a":1}',
  '{"a":1} [note]',
];
const NUMBERS = [0, 1, -1, 2, 3, 10, 0.5, 0.1 + 0.2, 1e21, -7.25, 100];

/** A random JSON value of bounded depth. */
export function jsonValue(r: Rand, depth = 0): unknown {
  const k = r();
  if (depth > 2 || k < 0.45) {
    const p = r();
    if (p < 0.35) return pick(r, STRINGS);
    if (p < 0.65) return pick(r, NUMBERS);
    if (p < 0.8) return r() < 0.5;
    return null;
  }
  if (k < 0.72) {
    const len = Math.floor(r() * 4);
    return Array.from({ length: len }, () => jsonValue(r, depth + 1));
  }
  const o: Record<string, unknown> = {};
  const len = Math.floor(r() * 4);
  for (let i = 0; i < len; i++)
    o[
      pick(
        r,
        KEYS.filter((x) => x !== 'missing'),
      )
    ] = jsonValue(r, depth + 1);
  return o;
}

/** A context: input and step outputs, some of them JSON strings. */
export function context(r: Rand): { input: Record<string, unknown>; steps: Record<string, { output: unknown }> } {
  const input: Record<string, unknown> = {};
  for (const k of KEYS) if (k !== 'missing' && r() < 0.8) input[k] = jsonValue(r);
  const steps: Record<string, { output: unknown }> = {};
  for (const s of STEP_NAMES) {
    if (s === 'nothing') continue;
    const v = jsonValue(r);
    steps[s] = { output: r() < 0.3 && v !== null && typeof v === 'object' ? JSON.stringify(v) : v };
  }
  return { input, steps };
}

function literal(r: Rand): string {
  const p = r();
  if (p < 0.2) return pick(r, ["'x'", '"hello world"', "''", '"0"', "'it\\'s'", '"a\\"quote"', "'true'"]);
  if (p < 0.45) return String(pick(r, [0, 1, -1, 2, 3, 10, 0.5, -7.25, 100, 1.5e3]));
  if (p < 0.65) return pick(r, ['true', 'false']);
  if (p < 0.8) return 'null';
  return pick(r, ['{}', '[]']);
}

function segment(r: Rand): string {
  const p = r();
  if (p < 0.2) return `[${Math.floor(r() * 3)}]`;
  if (p < 0.3) return `.${Math.floor(r() * 3)}`;
  if (p < 0.35) return `["odd key"]`;
  return `.${pick(
    r,
    KEYS.filter((k) => k !== 'odd key'),
  )}`;
}

function path(r: Rand): string {
  const p = r();
  let head: string;
  if (p < 0.4)
    head = `input.${pick(
      r,
      KEYS.filter((k) => k !== 'odd key'),
    )}`;
  else if (p < 0.6)
    head = pick(
      r,
      KEYS.filter((k) => k !== 'odd key'),
    );
  else if (p < 0.65) head = 'input';
  else head = `steps.${pick(r, STEP_NAMES)}.output`;
  const n = Math.floor(r() * 3);
  for (let i = 0; i < n; i++) head += segment(r);
  return head;
}

function operand(r: Rand): string {
  let e = r() < 0.75 ? path(r) : literal(r);
  if (r() < 0.25) e += ` | default ${literal(r)}`;
  return e;
}

/** A random expression (the inside of `${ }`). */
export function expression(r: Rand, depth = 0): string {
  const p = r();
  if (depth > 2 || p < 0.35) return operand(r);
  if (p < 0.6) return `${operand(r)} ${pick(r, ['==', '!=', '<', '>', '<=', '>='])} ${operand(r)}`;
  if (p < 0.75) return `${expression(r, depth + 1)} && ${expression(r, depth + 1)}`;
  if (p < 0.9) return `${expression(r, depth + 1)} || ${expression(r, depth + 1)}`;
  return `(${expression(r, depth + 1)})`;
}

/** A random template: a whole expression, or text with embedded expressions. */
export function template(r: Rand): string {
  if (r() < 0.55) return `\${ ${expression(r)} }`;
  const n = 1 + Math.floor(r() * 2);
  let out = pick(r, ['', 'Hi ', 'value: ']);
  for (let i = 0; i < n; i++) out += `\${${expression(r)}}${pick(r, ['', ' and ', '!', ' $${literal} '])}`;
  return out;
}
