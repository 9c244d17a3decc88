// A compiled evaluator for the JSONPath subset Step Functions accepts (Jayway semantics):
// `$`/`$$` roots, `.name`, `['name']`, `[n]`, `[*]`, `..name`, `[a,b]`, slices, `[?(@.x op v)]`, `.length()`.
// Paths are parsed once and cached; evaluation is a tight loop over the segments.

/** One step of a parsed path. */
export type PathSegment =
  | { readonly k: 'prop'; readonly name: string }
  | { readonly k: 'index'; readonly index: number }
  | { readonly k: 'wild' }
  | { readonly k: 'slice'; readonly start?: number; readonly end?: number; readonly step?: number }
  | { readonly k: 'desc'; readonly name?: string }
  | { readonly k: 'union'; readonly items: readonly (string | number)[] }
  | { readonly k: 'filter'; readonly test: (v: unknown, root: unknown) => boolean }
  | { readonly k: 'length' };

/** A parsed JSONPath. `definite` paths yield one value, others a list (Jayway's rule). */
export interface CompiledPath {
  readonly text: string;
  readonly context: boolean;
  readonly segments: readonly PathSegment[];
  readonly definite: boolean;
}

/** Thrown for a path that cannot be parsed or cannot be resolved against a value. */
export class JsonPathError extends Error {
  override readonly name = 'JsonPathError';
  constructor(
    message: string,
    readonly kind: 'syntax' | 'missing',
  ) {
    super(message);
  }
}

const cache = new Map<string, CompiledPath>();

/** Parses (and caches) a JSONPath such as `$.a[0].b` or `$$.Execution.Id`. */
export function compilePath(text: string): CompiledPath {
  let c = cache.get(text);
  if (!c) {
    c = parsePath(text);
    if (cache.size > 10_000) cache.clear();
    cache.set(text, c);
  }
  return c;
}

/** True when `text` parses as a JSONPath. */
export function isValidPath(text: string): boolean {
  try {
    compilePath(text);
    return true;
  } catch {
    return false;
  }
}

function parsePath(text: string): CompiledPath {
  let i = 0;
  const n = text.length;
  const fail = (why: string): never => {
    throw new JsonPathError(`Invalid JSONPath '${text}': ${why}`, 'syntax');
  };
  if (text[0] !== '$') fail('must start with $');
  i = 1;
  let context = false;
  if (text[1] === '$') {
    context = true;
    i = 2;
  }
  const segments: PathSegment[] = [];
  let definite = true;
  const readName = (): string => {
    const s = i;
    while (i < n && text[i] !== '.' && text[i] !== '[') i++;
    if (i === s) fail(`empty property name at ${s}`);
    return text.slice(s, i);
  };
  while (i < n) {
    const ch = text[i];
    if (ch === '.') {
      if (text[i + 1] === '.') {
        i += 2;
        definite = false;
        if (text[i] === '*') {
          i++;
          segments.push({ k: 'desc' });
        } else if (text[i] === '[') {
          segments.push({ k: 'desc' });
        } else segments.push({ k: 'desc', name: readName() });
        continue;
      }
      i++;
      if (text[i] === '*') {
        i++;
        definite = false;
        segments.push({ k: 'wild' });
        continue;
      }
      const name = readName();
      if (name === 'length()' && i === n) {
        segments.push({ k: 'length' });
        continue;
      }
      segments.push({ k: 'prop', name });
      continue;
    }
    if (ch === '[') {
      const close = findClose(text, i);
      if (close < 0) fail('unclosed [');
      const inner = text.slice(i + 1, close).trim();
      i = close + 1;
      if (inner === '*') {
        definite = false;
        segments.push({ k: 'wild' });
      } else if (inner.startsWith('?')) {
        definite = false;
        let body = inner.slice(1).trim();
        if (body.startsWith('(') && body.endsWith(')')) body = body.slice(1, -1);
        segments.push({ k: 'filter', test: compileFilter(body, text) });
      } else if (/^-?\d*\s*:\s*-?\d*(\s*:\s*-?\d*)?$/.test(inner)) {
        definite = false;
        const [a, b, c] = inner.split(':').map((x) => x.trim());
        segments.push({
          k: 'slice',
          ...(a ? { start: Number(a) } : {}),
          ...(b ? { end: Number(b) } : {}),
          ...(c ? { step: Number(c) } : {}),
        });
      } else {
        const items = splitUnion(inner).map((p) => parseKey(p, fail));
        if (items.length === 1) {
          const it = items[0]!;
          segments.push(typeof it === 'number' ? { k: 'index', index: it } : { k: 'prop', name: it });
        } else {
          definite = false;
          segments.push({ k: 'union', items });
        }
      }
      continue;
    }
    fail(`unexpected '${ch}' at ${i}`);
  }
  return { text, context, segments, definite };
}

function findClose(text: string, open: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let j = open; j < text.length; j++) {
    const c = text[j];
    if (quote) {
      if (c === '\\') j++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '[') depth++;
    else if (c === ']') {
      depth--;
      if (depth === 0) return j;
    }
  }
  return -1;
}

function splitUnion(inner: string): string[] {
  const out: string[] = [];
  let quote: string | null = null;
  let start = 0;
  for (let j = 0; j < inner.length; j++) {
    const c = inner[j];
    if (quote) {
      if (c === '\\') j++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === ',') {
      out.push(inner.slice(start, j).trim());
      start = j + 1;
    }
  }
  out.push(inner.slice(start).trim());
  return out;
}

function parseKey(p: string, fail: (why: string) => never): string | number {
  if (/^-?\d+$/.test(p)) return Number(p);
  const q = p[0];
  if ((q === "'" || q === '"') && p.endsWith(q) && p.length >= 2) {
    // Jayway keeps backslashes except before the quote character itself.
    return p.slice(1, -1).split(`\\${q}`).join(q);
  }
  return fail(`bad bracket key ${p}`);
}

// Filter expressions: `@.a.b op literal`, `@.x` (existence), combined with && / ||.
function compileFilter(body: string, text: string): (v: unknown, root: unknown) => boolean {
  const orParts = splitTop(body, '||');
  if (orParts.length > 1) {
    const fs = orParts.map((p) => compileFilter(p, text));
    return (v, r) => fs.some((f) => f(v, r));
  }
  const andParts = splitTop(body, '&&');
  if (andParts.length > 1) {
    const fs = andParts.map((p) => compileFilter(p, text));
    return (v, r) => fs.every((f) => f(v, r));
  }
  const m = /^\s*(.+?)\s*(==|!=|<=|>=|<|>)\s*(.+?)\s*$/.exec(body);
  if (!m) {
    const operand = compileOperand(body.trim(), text);
    return (v, r) => operand(v, r) !== undefined;
  }
  const left = compileOperand(m[1]!, text);
  const right = compileOperand(m[3]!, text);
  const op = m[2]!;
  return (v, r) => {
    const a = left(v, r);
    const b = right(v, r);
    if (a === undefined || b === undefined) return op === '!=' ? a !== b : false;
    switch (op) {
      case '==':
        return deepEqual(a, b);
      case '!=':
        return !deepEqual(a, b);
      default:
        if (typeof a !== typeof b || (typeof a !== 'number' && typeof a !== 'string')) return false;
        const x = a as number;
        const y = b as number;
        return op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y;
    }
  };
}

function splitTop(s: string, sep: string): string[] {
  const out: string[] = [];
  let quote: string | null = null;
  let depth = 0;
  let start = 0;
  for (let j = 0; j < s.length; j++) {
    const c = s[j];
    if (quote) {
      if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (depth === 0 && s.startsWith(sep, j)) {
      out.push(s.slice(start, j));
      start = j + sep.length;
      j += sep.length - 1;
    }
  }
  out.push(s.slice(start));
  return out;
}

function compileOperand(t: string, text: string): (v: unknown, root: unknown) => unknown {
  if (t.startsWith('@') || t.startsWith('$')) {
    const p = compilePath('$' + t.slice(1));
    const fromRoot = t.startsWith('$');
    return (v, r) => {
      const res = evaluatePath(p, fromRoot ? r : v);
      return res.found ? res.value : undefined;
    };
  }
  if ((t.startsWith("'") && t.endsWith("'")) || (t.startsWith('"') && t.endsWith('"'))) {
    const lit = t.slice(1, -1);
    return () => lit;
  }
  if (t === 'true' || t === 'false' || t === 'null' || /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(t)) {
    const lit: unknown = JSON.parse(t);
    return () => lit;
  }
  throw new JsonPathError(`Invalid JSONPath '${text}': bad filter operand ${t}`, 'syntax');
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The outcome of evaluating a path: `found` is false when a definite path hits a missing key. */
export interface PathResult {
  found: boolean;
  value: unknown;
  /** Jayway-style reason when not found. */
  reason?: string;
}

const hasOwn = Object.prototype.hasOwnProperty;

/** Evaluates a compiled path against a value (the caller picks input or context as root). */
export function evaluatePath(path: CompiledPath, root: unknown): PathResult {
  const segs = path.segments;
  if (path.definite) {
    let cur: unknown = root;
    for (let s = 0; s < segs.length; s++) {
      const seg = segs[s]!;
      if (seg.k === 'prop') {
        if (cur !== null && typeof cur === 'object' && !Array.isArray(cur) && hasOwn.call(cur, seg.name)) {
          cur = (cur as Record<string, unknown>)[seg.name];
        } else {
          const where = normalised(segs, s + 1);
          return {
            found: false,
            value: undefined,
            reason: s === segs.length - 1 ? `No results for path: ${where}` : `Missing property in path ${where}`,
          };
        }
      } else if (seg.k === 'index') {
        if (Array.isArray(cur)) {
          const idx = seg.index < 0 ? cur.length + seg.index : seg.index;
          if (idx < 0 || idx >= cur.length) {
            return { found: false, value: undefined, reason: `Index out of bounds when evaluating path ${normalised(segs, s + 1)}` };
          }
          cur = cur[idx];
        } else {
          return {
            found: false,
            value: undefined,
            reason: `Filter: [${seg.index}] can only be applied to arrays. Current context is: ${JSON.stringify(cur)}`,
          };
        }
      } else if (seg.k === 'length') {
        if (Array.isArray(cur)) cur = cur.length;
        else if (typeof cur === 'string') cur = cur.length;
        else if (cur !== null && typeof cur === 'object') cur = Object.keys(cur).length;
        else return { found: false, value: undefined, reason: `Invalid length() target in ${path.text}` };
      }
    }
    return { found: true, value: cur };
  }
  let cur: unknown[] = [root];
  for (const seg of segs) {
    const next: unknown[] = [];
    for (const v of cur) step(seg, v, next, root);
    cur = next;
  }
  return { found: true, value: cur };
}

function step(seg: PathSegment, v: unknown, out: unknown[], root: unknown): void {
  switch (seg.k) {
    case 'prop':
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && hasOwn.call(v, seg.name))
        out.push((v as Record<string, unknown>)[seg.name]);
      return;
    case 'index':
      if (Array.isArray(v)) {
        const idx = seg.index < 0 ? v.length + seg.index : seg.index;
        if (idx >= 0 && idx < v.length) out.push(v[idx]);
      }
      return;
    case 'wild':
      if (Array.isArray(v)) out.push(...v);
      else if (v !== null && typeof v === 'object') out.push(...Object.values(v));
      return;
    case 'slice': {
      if (!Array.isArray(v)) return;
      const len = v.length;
      const stepBy = seg.step ?? 1;
      let a = seg.start ?? 0;
      let b = seg.end ?? len;
      if (a < 0) a = Math.max(0, len + a);
      if (b < 0) b = Math.max(0, len + b);
      b = Math.min(b, len);
      for (let j = a; j < b; j += stepBy) out.push(v[j]);
      return;
    }
    case 'union':
      for (const it of seg.items) {
        if (typeof it === 'number') step({ k: 'index', index: it }, v, out, root);
        else step({ k: 'prop', name: it }, v, out, root);
      }
      return;
    case 'filter':
      if (Array.isArray(v)) {
        for (const x of v) if (seg.test(x, root)) out.push(x);
      } else if (v !== null && typeof v === 'object') {
        for (const x of Object.values(v)) if (seg.test(x, root)) out.push(x);
      }
      return;
    case 'desc':
      descend(v, seg.name, out);
      return;
    case 'length':
      if (Array.isArray(v) || typeof v === 'string') out.push(v.length);
      return;
  }
}

function descend(v: unknown, name: string | undefined, out: unknown[]): void {
  if (Array.isArray(v)) {
    if (name === undefined) out.push(...v);
    for (const x of v) descend(x, name, out);
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (name === undefined || k === name) out.push(x);
    }
    for (const x of Object.values(v)) descend(x, name, out);
  }
}

function normalised(segs: readonly PathSegment[], upTo: number): string {
  let s = '$';
  for (let j = 0; j < upTo; j++) {
    const seg = segs[j]!;
    if (seg.k === 'prop') s += `['${seg.name}']`;
    else if (seg.k === 'index') s += `[${seg.index}]`;
  }
  return s;
}

/**
 * Writes `value` into `target` at a reference path (ResultPath): only `.name`/`[n]` steps.
 * Returns the new root (the input is copied along the path, never mutated).
 */
export function setAtPath(target: unknown, path: CompiledPath, value: unknown): unknown {
  const segs = path.segments;
  if (segs.length === 0) return value;
  const write = (cur: unknown, s: number): unknown => {
    const seg = segs[s]!;
    if (seg.k === 'prop') {
      const base: Record<string, unknown> =
        cur !== null && typeof cur === 'object' && !Array.isArray(cur) ? { ...(cur as Record<string, unknown>) } : {};
      base[seg.name] = s === segs.length - 1 ? value : write(base[seg.name], s + 1);
      return base;
    }
    if (seg.k === 'index') {
      if (!Array.isArray(cur)) throw new JsonPathError(`Invalid path '${path.text}': cannot index a non-array`, 'missing');
      const arr = cur.slice();
      arr[seg.index] = s === segs.length - 1 ? value : write(arr[seg.index], s + 1);
      return arr;
    }
    throw new JsonPathError(`Invalid ResultPath '${path.text}': only simple references are allowed`, 'syntax');
  };
  return write(target, 0);
}

/** True for a reference path (no wildcards, filters, slices, unions, descent). */
export function isReferencePath(text: string): boolean {
  try {
    const p = compilePath(text);
    return !p.context && p.segments.every((s) => s.k === 'prop' || s.k === 'index');
  } catch {
    return false;
  }
}
