// The length JSON.stringify would give, without building the string: the payload quota sizes every
// step's configuration and input, and a string per step was most of what that check allocated.

/** `JSON.stringify(value).length` for plain JSON data (objects, arrays, strings, numbers, booleans, null). */
export function jsonLength(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return stringLength(value);
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4;
    case 'boolean':
      return value ? 4 : 5;
    case 'object':
      if (value === null) return 4;
      if (Array.isArray(value)) return arrayLength(value);
      if (isPlainObject(value)) return objectLength(value as Record<string, unknown>);
      break;
  }
  // Anything else (toJSON, class instances, undefined at the top) as JSON.stringify has it.
  return JSON.stringify(value)?.length ?? 0;
}

function arrayLength(a: readonly unknown[]): number {
  let n = a.length > 0 ? a.length + 1 : 2; // brackets and commas
  for (let i = 0; i < a.length; i++) n += omitted(a[i]) ? 4 : jsonLength(a[i]); // a hole or undefined is `null`
  return n;
}

function objectLength(o: Record<string, unknown>): number {
  let n = 1; // `{`, then `"key":value` and a `,` or the closing `}` each
  for (const k of Object.keys(o)) {
    const v = o[k];
    if (omitted(v)) continue;
    n += stringLength(k) + 2 + jsonLength(v);
  }
  return n === 1 ? 2 : n;
}

/** Values JSON.stringify leaves out of objects (and writes as null in arrays). */
function omitted(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v) as unknown;
  return (proto === Object.prototype || proto === null) && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
}

/** A string's JSON length: quotes, two-character escapes, `\u00XX` for other controls and lone surrogates. */
function stringLength(s: string): number {
  let n = s.length + 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c && (c < 0xd800 || c > 0xdfff)) continue;
    if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) n += 1;
    else if (c < 0x20) n += 5;
    else if (c <= 0xdbff && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00)
      i++; // a surrogate pair stays as it is
    else n += 5;
  }
  return n;
}
