// A js-yaml schema that resolves plain scalars exactly like the `yaml` package's YAML 1.2 core schema
// (its tests, in its order, with its conversions), so the fast path reads the same data the precise
// path does. js-yaml's own CORE_SCHEMA differs in small ways (`0b11` and `1_000` are numbers there, strings here).
import { Schema, Type } from 'js-yaml';

/**
 * Tags of the implicit types below. They are private on purpose: an explicit `!!int` (or any other
 * tag) is unknown to this schema, so js-yaml throws and the caller falls back to the precise path.
 */
export const FAST_TAG_PREFIX = 'tag:stepforge.dev,2026:fast-';

/** yaml 2.9.1's core schema tests, in its order (null, bool, int oct/dec/hex, float nan/exp/fixed). */
const CORE_SCALARS: readonly (readonly [RegExp, (s: string) => unknown])[] = [
  [/^(?:~|[Nn]ull|NULL)?$/, () => null],
  [/^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/, (s) => s[0] === 't' || s[0] === 'T'],
  [/^0o[0-7]+$/, (s) => parseInt(s.substring(2), 8)],
  [/^[-+]?[0-9]+$/, (s) => parseInt(s, 10)],
  [/^0x[0-9a-fA-F]+$/, (s) => parseInt(s.substring(2), 16)],
  [
    /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
    (s) => (s.slice(-3).toLowerCase() === 'nan' ? NaN : s[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY),
  ],
  [/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/, (s) => parseFloat(s)],
  [/^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/, (s) => parseFloat(s)],
];

/** Every core scalar starts with one of these (or is empty); most plain scalars in workflows do not. */
const MAY_RESOLVE = /^(?:[-+.0-9~nNtTfF]|$)/;

function coreScalar(s: string): ((s: string) => unknown) | undefined {
  if (!MAY_RESOLVE.test(s)) return undefined;
  for (const [test, construct] of CORE_SCALARS) if (test.test(s)) return construct;
  return undefined;
}

/**
 * One implicit type for all of them: js-yaml calls every implicit type's resolve on every plain
 * scalar, so a single type with a first-character check costs one call instead of eight.
 */
export const FAST_YAML_SCHEMA = new Schema({
  implicit: [
    new Type(FAST_TAG_PREFIX + 'core', {
      kind: 'scalar',
      resolve: (s: unknown) => typeof s === 'string' && coreScalar(s) !== undefined,
      construct: (s: string) => coreScalar(s)!(s),
    }),
  ],
});
