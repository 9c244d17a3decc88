// `{{var:NAME}}`, `{{var:NAME|default}}` and `{{var:NAME|var:OTHER}}` in any string of a chain, filled
// from `--var NAME=VALUE` or the environment (the caller merges them into one map).

/** One macro in a string: its name, default (when written) and position in the decoded string. */
export interface MacroUse {
  readonly name: string;
  readonly fallback?: string;
  /** `{{var:NAME|var:OTHER}}`: the fallback is the value of another variable, not the text `var:OTHER`. */
  readonly fallbackVar?: string;
  readonly start: number;
  readonly end: number;
}

const MACRO = /\{\{\s*var:([A-Za-z_][A-Za-z0-9_.-]*)\s*(?:\|([^}]*))?\}\}/g;
const VAR_FALLBACK = /^\s*var:([A-Za-z_][A-Za-z0-9_.-]*)\s*$/;

/** The macros in `text`, in order. */
export function findMacros(text: string): MacroUse[] {
  const out: MacroUse[] = [];
  if (!text.includes('{{')) return out;
  for (const m of text.matchAll(MACRO)) {
    const fallbackVar = m[2] !== undefined ? VAR_FALLBACK.exec(m[2])?.[1] : undefined;
    out.push({
      name: m[1]!,
      ...(m[2] !== undefined ? { fallback: m[2] } : {}),
      ...(fallbackVar !== undefined ? { fallbackVar } : {}),
      start: m.index!,
      end: m.index! + m[0].length,
    });
  }
  return out;
}

/**
 * A variable's value. Contenox also answers a hyphenated name with the variable spelt with
 * underscores (`var:alt-model` reads `alt_model`), so the chains its users copy behave the same here.
 */
function lookup(vars: Readonly<Record<string, string>>, name: string): string | undefined {
  if (Object.prototype.hasOwnProperty.call(vars, name)) return vars[name];
  const underscored = name.replaceAll('-', '_');
  return underscored !== name && Object.prototype.hasOwnProperty.call(vars, underscored) ? vars[underscored] : undefined;
}

/**
 * `text` with its macros filled: a value from `vars`, else the macro's default (for a `var:OTHER`
 * default, the value of OTHER); a macro with neither is kept as written and reported to `unfilled`.
 */
export function fillMacros(text: string, vars: Readonly<Record<string, string>>, unfilled: (use: MacroUse) => void): string {
  const uses = findMacros(text);
  if (uses.length === 0) return text;
  let out = '';
  let at = 0;
  for (const u of uses) {
    out += text.slice(at, u.start);
    const value = lookup(vars, u.name) ?? (u.fallbackVar !== undefined ? lookup(vars, u.fallbackVar) : u.fallback);
    if (value === undefined) {
      unfilled(u);
      out += text.slice(u.start, u.end);
    } else out += value;
    at = u.end;
  }
  return out + text.slice(at);
}
