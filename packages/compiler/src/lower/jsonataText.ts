// JSONata text helpers the lowering and its folds share: variables replaced by name, Assign values as
// expressions, whole-word mentions. Scans rather than RegExps: they run for every state of large workflows.

/**
 * `expr` evaluated at a terminal state: variables that state assigns are not visible in its own
 * Output, so each is replaced by the expression it is assigned.
 */
export function valueOf(expr: string, assigns: Record<string, unknown>): string {
  let out = expr;
  // A branch's every export is read off its terminal state's assigns: an assign's JSONata is built
  // only for the exports that mention its variable, not once per export.
  for (const name of Object.keys(assigns)) if (out.includes(`$${name}`)) out = replaceVariable(out, name, asJsonata(assigns[name]));
  return out;
}

/** An Assign value as one JSONata expression: `{% e %}` leaves become `(e)`, objects are rebuilt, the rest is JSON. */
export function asJsonata(v: unknown): string {
  if (typeof v === 'string') return v.startsWith('{%') && v.endsWith('%}') ? `(${v.slice(2, -2).trim()})` : JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(asJsonata).join(', ')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}: ${asJsonata(x)}`)
      .join(', ')}}`;
  return JSON.stringify(v ?? null);
}

/**
 * Replaces every `$name` (the whole variable name, not a prefix of a longer one, and not text inside a
 * string literal: a prompt may well say "$input") in a JSONata text.
 */
export function replaceVariable(expr: string, name: string, replacement: string): string {
  // An indexOf scan rather than a RegExp: it runs for every export of every branch, and the
  // regex replace was most of that time. Quotes are tracked only up to each occurrence.
  const token = `$${name}`;
  let at = expr.indexOf(token);
  if (at < 0) return expr;
  let out = '';
  let from = 0;
  let quote = 0;
  let scanned = 0;
  for (; at >= 0; at = expr.indexOf(token, at + 1)) {
    for (; scanned < at; scanned++) {
      const c = expr.charCodeAt(scanned);
      if (quote !== 0) {
        if (c === 92)
          scanned++; // a backslash escapes the next character
        else if (c === quote) quote = 0;
      } else if (c === 34 || c === 39 || c === 96) quote = c; // " ' and ` (a quoted field name)
    }
    if (quote !== 0 || scanned > at || isNameChar(expr.charCodeAt(at + token.length))) continue;
    out += expr.slice(from, at) + replacement;
    from = at + token.length;
  }
  return from === 0 ? expr : out + expr.slice(from);
}

/** [A-Za-z0-9_] (NaN past the end is not). */
function isNameChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

/** `new RegExp(`\\b${escaped name}\\b`).test(text)`, without building a RegExp per name and step. */
export function mentions(text: string, name: string): boolean {
  if (name.length === 0) return false;
  // `\w` is isNameChar; past either end of the text is not a word character.
  const first = isNameChar(name.charCodeAt(0));
  const last = isNameChar(name.charCodeAt(name.length - 1));
  for (let at = text.indexOf(name); at >= 0; at = text.indexOf(name, at + 1)) {
    const startOk = first !== isNameChar(text.charCodeAt(at - 1));
    const endOk = last !== isNameChar(text.charCodeAt(at + name.length));
    if (startOk && endOk) return true;
  }
  return false;
}
