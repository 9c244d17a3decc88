// State names are what people read in the AWS console, so steps keep their source names and only
// the helper states we add get suffixes. Variables get identifier-safe, globally unique names:
// ASL forbids re-assigning an outer scope's variable from a Parallel branch or Map iteration.
// Variables share one namespace with every function a generated expression calls: JSONata's built-ins
// ($string, $count, $lookup…), Step Functions' ($parse, $partition, $uuid…), our helpers ($sfStep…)
// and the locals those bind ($v, $sfV0…). Step names are user text, so a variable named after a step
// could shadow any of them. None of those names contains `_`, and no name handed out here lacks one:
// step outputs live in `s_<step>`, derived variables extend such a name, and a base without `_` gets a
// numeric suffix.
import { MAX_STATE_NAME } from '../checks/quotas/stateName.js';

/** Longest variable name Step Functions accepts. */
export const MAX_VARIABLE_NAME = 80;

/** A name made of letters, digits and `_` only, starting with a letter or `_`. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A string of printable ASCII characters only. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
/** What a variable name may start with. */
const VARIABLE_START = /^[A-Za-z_]/;

/** Hands out unique state names and variable names for one state machine. */
export class NameAllocator {
  private readonly states = new Set<string>();
  private readonly vars = new Set<string>(['states', 'input', 'run']);

  /** Claims `name` exactly; false when it is already taken. */
  claimState(name: string): boolean {
    if (this.states.has(name)) return false;
    this.states.add(name);
    return true;
  }

  /** True when `name` is taken. */
  hasState(name: string): boolean {
    return this.states.has(name);
  }

  /** A unique helper state name derived from `base` (ASCII-cleaned, ≤ 80 chars, ` 2`, ` 3`… on collision). */
  state(base: string): string {
    const clean = asciiOnly(base);
    for (let i = 1; ; i++) {
      const suffix = i === 1 ? '' : ` ${i}`;
      const candidate = truncate(clean, MAX_STATE_NAME - suffix.length) + suffix;
      if (this.claimState(candidate)) return candidate;
    }
  }

  /** The variable holding step `stepId`'s output: `s_` and the id made identifier-safe (see the file comment). */
  stepVariable(stepId: string): string {
    return this.variable(`s_${stepId}`);
  }

  /**
   * A unique variable name derived from `base` (letters, digits, `_`; starts with a letter or `_`;
   * always contains `_`, so it cannot be the name of a function an expression calls).
   */
  variable(base: string): string {
    // Most bases (`s_<step id>` of an identifier-like id) are clean already: one test, no new string.
    let clean = IDENTIFIER.test(base) ? base : base.replace(/[^A-Za-z0-9_]/g, '_');
    if (!VARIABLE_START.test(clean)) clean = `_${clean}`;
    for (let i = 1; ; i++) {
      const suffix = i === 1 ? '' : `_${i}`;
      const candidate = clean.slice(0, MAX_VARIABLE_NAME - suffix.length) + suffix;
      if (candidate.includes('_') && !this.vars.has(candidate)) {
        this.vars.add(candidate);
        return candidate;
      }
    }
  }
}

/** Replaces every non-printable-ASCII character with `_`. */
export function asciiOnly(s: string): string {
  // Tested first: a global replace that matches nothing still builds a new string, and nearly every name is printable ASCII.
  return PRINTABLE_ASCII.test(s) ? s : s.replace(/[^\x20-\x7e]/g, '_');
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}~`;
}
