// Where a defineWorkflow entry is written in a module's source text, so a definition that is refused
// when the module loads (its top level calls defineWorkflow) is reported at the offending entry, not
// at the start of the file. A light scan rather than a parse: object keys and array elements of the
// one `defineWorkflow({...})` call whose `id` is the workflow's, skipping strings and comments.

/** A 1-based line and column. */
export interface TextPosition {
  readonly line: number;
  readonly column: number;
}

/**
 * The position of `path` (`['nodes', 'a', 'run']`, `['edges', 2, 1]`) inside the defineWorkflow call
 * that defines `workflowId` in `source`: the deepest part of the path that can be found (the key of
 * an object entry, the start of an array element). Undefined when not even the call is found.
 */
export function locateWorkflowEntry(
  source: string,
  workflowId: string | undefined,
  path: readonly (string | number)[],
): TextPosition | undefined {
  const call = findCall(source, workflowId);
  if (call === undefined) return undefined;
  let at = call; // the `{` of the definition
  let found = call;
  for (const part of path) {
    const next = typeof part === 'number' ? elementStart(source, at, part) : keyStart(source, at, part);
    if (next === undefined) break;
    found = next.key;
    at = next.value;
  }
  return positionOf(source, found);
}

/** The `{` of the defineWorkflow call whose object names `id` (the first call when no id is known). */
function findCall(source: string, id: string | undefined): number | undefined {
  for (let from = 0; ;) {
    const k = source.indexOf('defineWorkflow(', from);
    if (k < 0) return undefined;
    const brace = skipSpace(source, k + 'defineWorkflow('.length);
    if (source[brace] === '{') {
      if (id === undefined) return brace;
      const idKey = keyStart(source, brace, 'id');
      if (idKey !== undefined && stringAt(source, idKey.value) === id) return brace;
    }
    from = k + 1;
  }
}

/** The string literal at `at` (its text, escapes left as written), if one starts there. */
function stringAt(source: string, at: number): string | undefined {
  const q = source[at];
  if (q !== '"' && q !== "'" && q !== '`') return undefined;
  const end = skipString(source, at);
  return source.slice(at + 1, end - 1);
}

/** Within the object whose `{` is at `open`, the key `name` at depth one: its start and its value's start. */
function keyStart(source: string, open: number, name: string): { key: number; value: number } | undefined {
  if (source[open] !== '{') return undefined;
  let depth = 0;
  let expectKey = true;
  for (let i = open; i < source.length;) {
    const c = source[i]!;
    if (c === '"' || c === "'" || c === '`') {
      if (depth === 1 && expectKey) {
        const end = skipString(source, i);
        const after = skipSpace(source, end);
        if (source[after] === ':' && source.slice(i + 1, end - 1) === name) return { key: i, value: skipSpace(source, after + 1) };
        i = end;
        continue;
      }
      i = skipString(source, i);
      continue;
    }
    if (c === '/' && (source[i + 1] === '/' || source[i + 1] === '*')) {
      i = skipComment(source, i);
      continue;
    }
    if (c === '{' || c === '[' || c === '(') depth++;
    else if (c === '}' || c === ']' || c === ')') {
      depth--;
      if (depth === 0) return undefined;
    } else if (depth === 1 && c === ',') expectKey = true;
    else if (depth === 1 && expectKey && /[A-Za-z_$]/.test(c)) {
      const m = /^[A-Za-z_$][\w$]*/.exec(source.slice(i, i + 200))![0];
      const after = skipSpace(source, i + m.length);
      if (m === name && (source[after] === ':' || source[after] === ',' || source[after] === '}'))
        return { key: i, value: source[after] === ':' ? skipSpace(source, after + 1) : i };
      expectKey = false;
      i += m.length;
      continue;
    } else if (depth === 1 && c === ':') expectKey = false;
    i++;
  }
  return undefined;
}

/** Within the array whose `[` is at `open`, where element `index` starts (for it, its key and value are the same). */
function elementStart(source: string, open: number, index: number): { key: number; value: number } | undefined {
  if (source[open] !== '[') return undefined;
  let depth = 0;
  let n = 0;
  let atStart = true;
  for (let i = open; i < source.length;) {
    const c = source[i]!;
    if (c === '/' && (source[i + 1] === '/' || source[i + 1] === '*')) {
      i = skipComment(source, i);
      continue;
    }
    if (depth === 1 && atStart && !/\s/.test(c) && c !== ',' && c !== ']') {
      if (n === index) return { key: i, value: i };
      atStart = false;
    }
    if (c === '"' || c === "'" || c === '`') {
      i = skipString(source, i);
      continue;
    }
    if (c === '{' || c === '[' || c === '(') depth++;
    else if (c === '}' || c === ']' || c === ')') {
      depth--;
      if (depth === 0) return undefined;
    } else if (depth === 1 && c === ',') {
      n++;
      atStart = true;
    }
    i++;
  }
  return undefined;
}

/** The index just past the string literal that starts at `at`. */
function skipString(source: string, at: number): number {
  const q = source[at];
  let i = at + 1;
  while (i < source.length && source[i] !== q) i += source[i] === '\\' ? 2 : 1;
  return i + 1;
}

/** The index just past the comment that starts at `at`. */
function skipComment(source: string, at: number): number {
  if (source[at + 1] === '/') {
    const nl = source.indexOf('\n', at);
    return nl < 0 ? source.length : nl + 1;
  }
  const close = source.indexOf('*/', at + 2);
  return close < 0 ? source.length : close + 2;
}

function skipSpace(source: string, at: number): number {
  let i = at;
  while (i < source.length && /\s/.test(source[i]!)) i++;
  return i;
}

function positionOf(source: string, offset: number): TextPosition {
  let line = 1;
  let lineStart = 0;
  for (let i = source.indexOf('\n'); i >= 0 && i < offset; i = source.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}
