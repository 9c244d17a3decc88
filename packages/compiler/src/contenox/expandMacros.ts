// `{{var:NAME}}` and `{{var:NAME|default}}` in any string of a chain, filled from `--var NAME=VALUE`
// or the environment (the caller merges them into one map).

/** One macro in a string: its name, default (when written) and position in the decoded string. */
export interface MacroUse {
  readonly name: string;
  readonly fallback?: string;
  readonly start: number;
  readonly end: number;
}

const MACRO = /\{\{\s*var:([A-Za-z_][A-Za-z0-9_.-]*)\s*(?:\|([^}]*))?\}\}/g;

/** The macros in `text`, in order. */
export function findMacros(text: string): MacroUse[] {
  const out: MacroUse[] = [];
  if (!text.includes('{{')) return out;
  for (const m of text.matchAll(MACRO)) {
    out.push({ name: m[1]!, ...(m[2] !== undefined ? { fallback: m[2] } : {}), start: m.index!, end: m.index! + m[0].length });
  }
  return out;
}

/**
 * `text` with its macros filled: a value from `vars`, else the macro's default; a macro with
 * neither is kept as written and reported to `unfilled`.
 */
export function fillMacros(text: string, vars: Readonly<Record<string, string>>, unfilled: (use: MacroUse) => void): string {
  const uses = findMacros(text);
  if (uses.length === 0) return text;
  let out = '';
  let at = 0;
  for (const u of uses) {
    out += text.slice(at, u.start);
    const value = Object.prototype.hasOwnProperty.call(vars, u.name) ? vars[u.name] : u.fallback;
    if (value === undefined) {
      unfilled(u);
      out += text.slice(u.start, u.end);
    } else out += value;
    at = u.end;
  }
  return out + text.slice(at);
}
