const SIMPLE_ESCAPES = new Set(['0', 'a', 'b', 't', '\t', 'n', 'v', 'f', 'r', 'e', ' ', '"', '/', '\\', 'N', '_', 'L', 'P']);
const HEX_ESCAPES: Record<string, number> = { x: 2, u: 4, U: 8 };

function isSpace(c: string | undefined): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\r';
}

/** What scalarOffsets reads of a string scalar: a `yaml` Scalar, or the fast parser's span of one. */
export interface ScalarSpan {
  readonly value: unknown;
  /** `[start, valueEnd, …]` in the source, as `yaml` gives it. */
  readonly range?: readonly number[] | null;
  /** `yaml`'s scalar style (QUOTE_DOUBLE, QUOTE_SINGLE, PLAIN, BLOCK_LITERAL, BLOCK_FOLDED). */
  readonly type?: string | null;
}

/**
 * Maps each character of a YAML/JSON string scalar's parsed value to the offset in the source text
 * it came from, so an error inside the value can point at the file's line:column. Works for plain,
 * single- and double-quoted (escapes, `''`, folded lines) and block scalars by walking value and
 * source together: equal characters pair up, escapes pair with the value character they produce, and
 * source whitespace the value does not contain (indentation, folding) is skipped. The result has
 * `value.length + 1` entries (the last is the end of the scalar).
 */
export function scalarOffsets(node: ScalarSpan, source: string): number[] {
  const value = String(node.value);
  const [start = 0, valueEnd = 0] = node.range ?? [];
  const map = new Array<number>(value.length + 1);
  let p = start;
  const type = node.type;
  if (type === 'QUOTE_DOUBLE' || type === 'QUOTE_SINGLE') p = start + 1;
  else if (type === 'BLOCK_LITERAL' || type === 'BLOCK_FOLDED') {
    // Skip the header line (`|`, `>-`, `|2` and any comment).
    const nl = source.indexOf('\n', start);
    p = nl < 0 ? valueEnd : nl + 1;
  }
  const end = Math.max(p, valueEnd);
  let i = 0;
  while (i < value.length) {
    if (p >= end) {
      map[i++] = Math.max(start, end - 1);
      continue;
    }
    const c = value[i]!;
    const s = source[p]!;
    if (type === 'QUOTE_DOUBLE' && s === '\\') {
      const e = source[p + 1];
      if (e === '\n' || e === '\r') {
        // Escaped line break: produces nothing; the next line's indentation is dropped too.
        p += 2;
        while (p < end && isSpace(source[p])) p++;
        continue;
      }
      const hex = e === undefined ? undefined : HEX_ESCAPES[e];
      const width = hex !== undefined ? 2 + hex : SIMPLE_ESCAPES.has(e ?? '') ? 2 : 1;
      map[i] = p;
      // \U escapes beyond the BMP produce two UTF-16 units from one escape.
      if (hex === 8 && value.codePointAt(i)! > 0xffff) map[++i] = p;
      i++;
      p += width;
      continue;
    }
    if (type === 'QUOTE_SINGLE' && s === "'" && source[p + 1] === "'") {
      map[i++] = p;
      p += 2;
      continue;
    }
    if (s === c || (isSpace(c) && isSpace(s))) {
      map[i++] = p++;
      continue;
    }
    if (isSpace(s)) {
      p++;
      continue;
    }
    // Should not happen for well-formed scalars; keep going so every character still gets an offset.
    map[i++] = p++;
  }
  map[value.length] = Math.min(p, end);
  return map;
}
