// A js-yaml schema that resolves plain scalars exactly like the `yaml` package's YAML 1.2 core schema
// (its tests, in its order, with its conversions), so the fast path reads the same data the precise
// path does. js-yaml's own CORE_SCHEMA differs in small ways (`0b` binary, `_` in numbers, `.5e3`).
import { Schema, Type } from 'js-yaml';

/**
 * Tags of the implicit types below. They are private on purpose: an explicit `!!int` (or any other
 * tag) is unknown to this schema, so js-yaml throws and the caller falls back to the precise path.
 */
export const FAST_TAG_PREFIX = 'tag:stepforge.dev,2026:fast-';

function scalar(name: string, test: RegExp, construct: (s: string) => unknown): Type {
  return new Type(FAST_TAG_PREFIX + name, { kind: 'scalar', resolve: (s: unknown) => typeof s === 'string' && test.test(s), construct });
}

/** Plain-scalar resolution of yaml 2.9.1's core schema (null, bool, int oct/dec/hex, float nan/exp/fixed). */
export const FAST_YAML_SCHEMA = new Schema({
  implicit: [
    scalar('null', /^(?:~|[Nn]ull|NULL)?$/, () => null),
    scalar('bool', /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/, (s) => s[0] === 't' || s[0] === 'T'),
    scalar('int-oct', /^0o[0-7]+$/, (s) => parseInt(s.substring(2), 8)),
    scalar('int', /^[-+]?[0-9]+$/, (s) => parseInt(s, 10)),
    scalar('int-hex', /^0x[0-9a-fA-F]+$/, (s) => parseInt(s.substring(2), 16)),
    scalar('float-nan', /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/, (s) =>
      s.slice(-3).toLowerCase() === 'nan' ? NaN : s[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY),
    scalar('float-exp', /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/, (s) => parseFloat(s)),
    scalar('float', /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/, (s) => parseFloat(s)),
  ],
});
