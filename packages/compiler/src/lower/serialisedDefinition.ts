// What compileIr reads off the serialised definition: its UTF-8 size (the 1 MB quota), the
// `${…}` placeholders it uses (the manifest's list for DefinitionSubstitutions) and the Bedrock
// models its steps name (the manifest's bedrockModels), from the text it serialises anyway.
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

/** A JSON string value (never a key: no `:` follows) that is a whole `bedrock:<id>` model. */
const BEDROCK_VALUE = /"bedrock:((?:[^"\\]|\\.)+)"(?!:)/g;

/** The keys whose values hold states (or hold what holds them): the walk opens these instead of serialising them whole. */
const HOLDS_STATES: ReadonlySet<string> = new Set(['States', 'Branches', 'ItemProcessor', 'Iterator']);

/**
 * Measures JSON.stringify(definition) in pieces: the walk opens the definition, every States map, and
 * every state or branch that holds states, and serialises everything else (a Task, a field of a
 * Parallel) whole, adding the brackets, keys and commas JSON.stringify would put between them. One
 * string of a whole megabyte cost more to read than to build: V8 returns it unflattened, and the
 * first look at it (the byte count, a scan) copied it into a fresh large-object page; pieces of a
 * state each stay small young strings, scanned where they are. Placeholders and models sit inside
 * JSON strings, which never span two pieces, so scanning every piece finds what scanning the whole would.
 */
export function serialisedDefinition(definition: Readonly<Record<string, unknown>>): SerialisedDefinition {
  const acc: Pieces = { bytes: 0, placeholders: new Set(), bedrockModels: new Set() };
  if (opens(definition, true)) openObject(definition, acc);
  else valuePiece(JSON.stringify(definition), acc);
  return {
    bytes: acc.bytes,
    placeholders: [...acc.placeholders].sort().map(placeholder),
    bedrockModels: [...acc.bedrockModels].sort(),
  };
}

interface Pieces {
  bytes: number;
  readonly placeholders: Set<string>;
  readonly bedrockModels: Set<string>;
}

/** Whether the walk opens `v` (a plain object or array holding states) rather than serialising it whole. */
function opens(v: unknown, underStatesKey: boolean): boolean {
  if (Array.isArray(v)) return underStatesKey;
  if (v === null || typeof v !== 'object') return false;
  // Only plain objects: anything else (a toJSON, a class) is serialised whole, as JSON.stringify sees it.
  const proto = Object.getPrototypeOf(v) as unknown;
  if ((proto !== Object.prototype && proto !== null) || typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
  if (underStatesKey) return true;
  for (const k in v) if (HOLDS_STATES.has(k)) return true;
  return false;
}

/**
 * `{…}` of a plain object, as JSON.stringify writes it: its keys serialised as one array, the members
 * it opens walked, and the rest serialised together as one array (`[a,b]` is `a`, `b` and their
 * brackets and comma), so a States map of Tasks costs two serialisations, not one per state.
 */
function openObject(o: Readonly<Record<string, unknown>>, acc: Pieces): void {
  let members = 0;
  const leaves: unknown[] = [];
  for (const k of Object.keys(o)) {
    const v = o[k];
    // What JSON.stringify leaves out of an object (it writes null for them in an array).
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    if (typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      // toJSON is called with the member's key, which an array would not give it: serialised as the
      // member itself (`{"key":…}`, or `{}` when it gives undefined), less its braces and colon.
      const json = JSON.stringify({ [k]: v });
      if (json === '{}') continue;
      members++;
      valuePiece(json, acc);
      acc.bytes -= 3;
      continue;
    }
    members++;
    // A key, and a string or other plain member, are counted here: serialising each of these short
    // values (a state name, a StartAt) cost more than counting its characters.
    acc.bytes += stringBytes(k, acc, true);
    if (typeof v === 'string') acc.bytes += stringBytes(v, acc, false);
    else if (typeof v !== 'object' || v === null) acc.bytes += (JSON.stringify(v) as string).length;
    else if (opens(v, HOLDS_STATES.has(k))) {
      if (Array.isArray(v)) openArray(v, acc);
      else openObject(v as Record<string, unknown>, acc);
    } else if (leaves.push(v) === LEAVES_PER_PIECE) flushLeaves(leaves, acc);
  }
  // `{}`, a `:` per key and a `,` between members.
  acc.bytes += 2 + members + Math.max(0, members - 1);
  flushLeaves(leaves, acc);
}

/**
 * Members serialised together, then many at a time: a piece stays well under the size V8 puts in
 * large-object space (a 1,000-task Contenox chain's one States map would be most of the megabyte).
 */
const LEAVES_PER_PIECE = 16;

/** Counts and scans the values in `leaves` (`[a,b]` less its brackets and commas), then empties it. */
function flushLeaves(leaves: unknown[], acc: Pieces): void {
  if (leaves.length === 0) return;
  valuePiece(JSON.stringify(leaves), acc);
  acc.bytes -= 2 + (leaves.length - 1);
  leaves.length = 0;
}

/** `[…]` of an array whose items may hold states (a Parallel's Branches). */
function openArray(a: readonly unknown[], acc: Pieces): void {
  acc.bytes += 2 + Math.max(0, a.length - 1); // [ ] and the commas
  for (const v of a) {
    if (opens(v, false)) openObject(v as Record<string, unknown>, acc);
    else valuePiece(JSON.stringify(v) ?? 'null', acc);
  }
}

/** A serialised value, counted and scanned. */
function valuePiece(json: string, acc: Pieces): void {
  acc.bytes += utf8Bytes(json);
  if (json.includes('${')) for (const name of placeholderNames(json)) acc.placeholders.add(name);
  if (json.includes('"bedrock:')) for (const m of json.matchAll(BEDROCK_VALUE)) acc.bedrockModels.add(JSON.parse(`"${m[1]!}"`) as string);
}

/** UTF-8 size of a string: its length when it is ASCII (nearly every piece), else what Buffer counts. */
function utf8Bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/**
 * The UTF-8 bytes of `s` as a JSON string (quotes and escapes included, lone surrogates escaped as
 * JSON.stringify does), recording the placeholders in it and, unless it is a key, the Bedrock model it names.
 */
function stringBytes(s: string, acc: Pieces, key: boolean): number {
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
