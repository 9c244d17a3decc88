// What the Lambda bundles put where aws-xray-sdk-core requires `semver` (aliased in
// infra/lib/bundling/handlerBundling.ts). Its only caller in a handler bundle is X-Ray's AWS SDK v2
// patcher, which asks `semver.gte(AWS.VERSION, minimum)`: the whole package (ranges, coercion,
// comparators) is ~29 KiB of every handler for that one comparison. This is SemVer 2.0.0's
// precedence (section 11), checked against semver itself in packages/runtime/test/semverGte.test.ts;
// infra/test/handlerBundles.test.ts fails if anything else in a bundle comes to need semver.
import { RuntimeError } from '../errors/RuntimeError.js';

const VERSION =
  /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

function parse(v: string): { core: number[]; pre: string[] } {
  const m = VERSION.exec(v.trim());
  if (!m) throw new RuntimeError('InvalidInput', `Invalid Version: ${v}`);
  return { core: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4] === undefined ? [] : m[4].split('.') };
}

/** One pre-release identifier against another: numeric ones by value and below alphanumeric ones. */
function compareIdentifier(a: string, b: string): number {
  const an = /^\d+$/.test(a);
  const bn = /^\d+$/.test(b);
  if (an && bn) return Math.sign(Number(a) - Number(b));
  if (an !== bn) return an ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function compare(a: string, b: string): number {
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) if (x.core[i] !== y.core[i]) return Math.sign(x.core[i]! - y.core[i]!);
  // A pre-release ranks below its release; build metadata never counts.
  if (x.pre.length === 0 || y.pre.length === 0) return Math.sign(y.pre.length - x.pre.length);
  for (let i = 0; i < Math.min(x.pre.length, y.pre.length); i++) {
    const c = compareIdentifier(x.pre[i]!, y.pre[i]!);
    if (c !== 0) return c;
  }
  return Math.sign(x.pre.length - y.pre.length);
}

/** True when version `a` is greater than or equal to `b` by SemVer precedence. */
export function gte(a: string, b: string): boolean {
  return compare(a, b) >= 0;
}
