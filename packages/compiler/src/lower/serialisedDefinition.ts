// What compileIr reads off the serialised definition: its UTF-8 size (the 1 MB quota), the
// `${…}` placeholders it uses (the manifest's list for DefinitionSubstitutions) and the Bedrock
// models its steps name (the manifest's bedrockModels), by walking the definition as the serialiser would.
import { placeholder, placeholderNames } from '@stepforge/contract';

/** The serialised definition's size and placeholders. */
export interface SerialisedDefinition {
  /** UTF-8 bytes of JSON.stringify(definition). */
  readonly bytes: number;
  /** Every `${Name}` placeholder in it, each once, sorted. */
  readonly placeholders: readonly string[];
  /** The ids of every `bedrock:<id>` string value in it (a step's or an agent's model), each once, sorted. */
  readonly bedrockModels: readonly string[];
}

/**
 * A character JSON.stringify escapes (`"`, `\\`, controls) or one outside ASCII: a string without any
 * is its length plus two quotes. One native test per string, with no match object.
 */
const NOT_PLAIN = /["\\\u0000-\u001f\u007f-\uffff]/;

/** What JSON.stringify writes as an escape sequence (a control) or as more than one UTF-8 byte. */
const CONTROL_OR_WIDE = /[\u0000-\u001f\u0080-\uffff]/;

/**
 * Measures JSON.stringify(definition) without serialising it: a walk that adds up what the
 * serialiser would write (braces, brackets, keys, colons, commas, strings with their escapes,
 * numbers), scanning each string for placeholders and each string value for a Bedrock model. A
 * megabyte of JSON text that nothing else reads made a compile allocate several megabytes of young
 * strings (the pieces the serialiser writes, copied again by their first read), which the
 * scavenger then paid for; a string that needs no escape is counted by its length, so the walk
 * costs less than the serialiser it replaces. Anything that is not plain data (a `toJSON`, a class
 * instance) is serialised by JSON.stringify as it would see it, and that piece counted and scanned.
 */
export function serialisedDefinition(definition: Readonly<Record<string, unknown>>): SerialisedDefinition {
  const acc: Pieces = { placeholders: new Set(), bedrockModels: new Set(), scanned: new Set() };
  let bytes: number;
  try {
    bytes = valueBytes(definition, acc);
  } catch (e) {
    // A cycle never ends the walk: JSON.stringify names it (and throws its own error for it).
    if (!(e instanceof RangeError)) throw e;
    bytes = pieceBytes(JSON.stringify(definition), acc);
  }
  return {
    bytes,
    placeholders: [...acc.placeholders].sort().map(placeholder),
    bedrockModels: [...acc.bedrockModels].sort(),
  };
}

interface Pieces {
  readonly placeholders: Set<string>;
  readonly bedrockModels: Set<string>;
  /** Strings holding `${` already scanned for placeholders (every Task's Resource is one of a few). */
  readonly scanned: Set<string>;
}

/** A JSON string value (never a key: no `:` follows) that is a whole `bedrock:<id>` model. */
const BEDROCK_VALUE = /"bedrock:((?:[^"\\]|\\.)+)"(?!:)/g;

/** The UTF-8 bytes JSON.stringify writes for `v` (a member or item already known not to be skipped). */
function valueBytes(v: unknown, acc: Pieces): number {
  if (typeof v === 'string') return stringBytes(v, acc, false);
  // JSON.stringify writes a finite number as String does, and anything else as null.
  if (typeof v === 'number') return Number.isFinite(v) ? String(v).length : 4;
  if (typeof v === 'boolean') return v ? 4 : 5;
  if (v === null) return 4;
  if (typeof v !== 'object') return pieceBytes(JSON.stringify(v) ?? 'null', acc);
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return pieceBytes(JSON.stringify(v) ?? 'null', acc);
  if (Array.isArray(v)) return arrayBytes(v, acc);
  const proto = Object.getPrototypeOf(v) as unknown;
  // Only plain objects are walked: anything else is serialised whole, as JSON.stringify sees it.
  if (proto !== Object.prototype && proto !== null) return pieceBytes(JSON.stringify(v) ?? 'null', acc);
  return objectBytes(v as Readonly<Record<string, unknown>>, acc);
}

/** `{…}`: its members, a `:` each and the commas between them; skipped members count nothing. */
function objectBytes(o: Readonly<Record<string, unknown>>, acc: Pieces): number {
  let n = 2;
  let members = 0;
  for (const k in o) {
    if (!Object.hasOwn(o, k)) continue;
    const v = o[k];
    // What JSON.stringify leaves out of an object (it writes null for them in an array).
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    if (typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      // toJSON is called with the member's key: serialised as the member itself (`{"key":…}`, or
      // `{}` when it gives undefined), less its braces; its colon and comma are counted here.
      const json = JSON.stringify({ [k]: v });
      if (json === '{}') continue;
      n += pieceBytes(json, acc) - 3;
    } else n += stringBytes(k, acc, true) + valueBytes(v, acc);
    members++;
  }
  return members === 0 ? n : n + members + members - 1;
}

/** `[…]`: its items and the commas between them; a skipped item is `null`. */
function arrayBytes(a: readonly unknown[], acc: Pieces): number {
  let n = 2 + (a.length > 0 ? a.length - 1 : 0);
  for (let i = 0; i < a.length; i++) {
    const v = a[i];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') n += 4;
    // toJSON would be called with the item's index: the array is serialised whole instead.
    else if (typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function')
      return pieceBytes(JSON.stringify(a), acc);
    else n += valueBytes(v, acc);
  }
  return n;
}

/** A serialised piece's UTF-8 bytes, its placeholders and models recorded. */
function pieceBytes(json: string, acc: Pieces): number {
  if (json.includes('${')) for (const name of placeholderNames(json)) acc.placeholders.add(name);
  if (json.includes('"bedrock:')) for (const m of json.matchAll(BEDROCK_VALUE)) acc.bedrockModels.add(JSON.parse(`"${m[1]!}"`) as string);
  return Buffer.byteLength(json, 'utf8');
}

/**
 * The UTF-8 bytes of `s` as a JSON string (quotes and escapes included, lone surrogates escaped as
 * JSON.stringify does), recording the placeholders in it and, unless it is a key, the Bedrock model it names.
 */
function stringBytes(s: string, acc: Pieces, key: boolean): number {
  if (!NOT_PLAIN.test(s)) return plainStringBytes(s, acc, key, 0, false);
  // ASCII with quotes or backslashes (JSONata string literals): each is one more byte, counted by
  // native scans; only text with controls or beyond ASCII is read character by character.
  if (!CONTROL_OR_WIDE.test(s)) {
    const quotes = occurrences(s, '"');
    return plainStringBytes(s, acc, key, quotes + occurrences(s, '\\'), quotes > 0);
  }
  let n = 2;
  let dollar = false;
  let quote = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      if (c >= 0x20) {
        if (c === 34) {
          n += 2;
          quote = true;
        } else if (c === 92) n += 2;
        else {
          n += 1;
          if (c === 36) dollar = true;
        }
      } else n += c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
    } else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 6;
    } else n += c >= 0xdc00 && c <= 0xdfff ? 6 : 3;
  }
  if (dollar) placeholdersIn(s, acc.placeholders);
  if (!key) bedrockModel(s, quote, acc.bedrockModels);
  return n;
}

/** A string's JSON bytes when only `"` and `\\` (`escaped` of them) need escaping, its placeholders and model recorded. */
function plainStringBytes(s: string, acc: Pieces, key: boolean, escaped: number, hasQuote: boolean): number {
  if (s.includes('${') && !acc.scanned.has(s)) {
    acc.scanned.add(s);
    placeholdersIn(s, acc.placeholders);
  }
  if (!key) bedrockModel(s, hasQuote, acc.bedrockModels);
  return s.length + 2 + escaped;
}

/** How often `c` occurs in `s`. */
function occurrences(s: string, c: string): number {
  let n = 0;
  for (let at = s.indexOf(c); at >= 0; at = s.indexOf(c, at + 1)) n++;
  return n;
}

/** `${Name}`: a letter, then letters and digits (the contract's placeholder pattern). */
const PLACEHOLDER = /\$\{([A-Za-z][A-Za-z0-9]*)\}/g;

function placeholdersIn(s: string, out: Set<string>): void {
  if (!s.includes('${')) return;
  for (const m of s.matchAll(PLACEHOLDER)) out.add(m[1]!);
}

const BEDROCK = 'bedrock:';

/**
 * The model `/"bedrock:((?:[^"\\]|\\.)+)"(?!:)/` finds in this string's JSON: the match starts at its
 * opening quote or at an escaped quote inside it and always runs to its closing quote (every other
 * quote in between is escaped), so the model is the rest of the string after the first `bedrock:`
 * that starts it or follows a `"`, when anything is left.
 */
function bedrockModel(s: string, hasQuote: boolean, out: Set<string>): void {
  if (s.startsWith(BEDROCK) && s.length > BEDROCK.length) {
    out.add(s.slice(BEDROCK.length));
    return;
  }
  if (!hasQuote) return;
  for (let at = s.indexOf('"bedrock:'); at >= 0; at = s.indexOf('"bedrock:', at + 1)) {
    if (s.length > at + 1 + BEDROCK.length) {
      out.add(s.slice(at + 1 + BEDROCK.length));
      return;
    }
  }
}
