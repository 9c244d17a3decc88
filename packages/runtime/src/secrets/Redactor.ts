/** The text that replaces a secret value wherever it would otherwise appear. */
export const REDACTED = '***';

/** A secret's bytes as base64 at each of the three alignments it may sit at inside a longer encoded text. */
function base64Fragments(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const out: string[] = [];
  for (let k = 0; k < 3; k++) {
    const b64 = Buffer.concat([Buffer.alloc(k), bytes])
      .toString('base64')
      .replace(/=+$/, '');
    // Only the characters every bit of which comes from the secret: they are the same whatever
    // precedes or follows it (`Basic base64(user:SECRET)`).
    const fragment = b64.slice(Math.ceil((8 * k) / 6), Math.floor((8 * (k + bytes.length)) / 6));
    out.push(fragment, fragment.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return out;
}

function lowerHex(text: string): string {
  return text.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase());
}

/**
 * Every spelling in which `value` can reach a stored or printed text: as it is; JSON-escaped (once
 * and twice, and with non-ASCII as `\uXXXX`, as Python writes it); URL-encoded as a component, as a
 * URL path or query (WHATWG), and as a form (`+` for space), with upper- or lower-case hex; base64
 * and base64url, whole and at any alignment inside a longer encoding.
 */
export function secretEncodings(value: string): string[] {
  const json = JSON.stringify(value).slice(1, -1);
  const asciiJson = json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const urlish: string[] = [encodeURIComponent(value), encodeURI(value), new URLSearchParams({ v: value }).toString().slice(2)];
  try {
    // A special scheme's path also turns `\` into `/`; a non-special one's keeps it.
    urlish.push(
      new URL(`http://h/${value}`).pathname.slice(1),
      new URL(`stepforge:/${value}`).pathname.slice(1),
      new URL(`http://h/?${value}`).search.slice(1),
    );
  } catch {
    // A value no URL can hold is not in one.
  }
  const base64 = Buffer.from(value, 'utf8').toString('base64');
  const all = [
    value,
    json,
    asciiJson,
    JSON.stringify(json).slice(1, -1),
    JSON.stringify(asciiJson).slice(1, -1),
    ...urlish,
    ...urlish.map(lowerHex),
    base64,
    base64.replace(/=+$/, ''),
    Buffer.from(value, 'utf8').toString('base64url'),
    // Fragments shorter than 8 characters would redact ordinary text; a short secret's whole encodings above still count.
    ...(value.length >= 8 ? base64Fragments(value) : []),
  ];
  return [...new Set(all.filter((v) => v.length >= Math.min(4, value.length)))];
}

/**
 * The parts of a secret that is a URL which a record may hold without the rest: the URL as it is
 * normalised (`new URL(v).href`), without its query, its path and query, and its credentials.
 * The origin alone is not a secret (it names a public host) and is left alone.
 */
export function secretUrlParts(value: string): string[] {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return [];
  }
  if (!url.host) return [];
  const parts = [
    url.href,
    `${url.origin}${url.pathname}`,
    `${url.pathname}${url.search}`,
    url.search,
    decodeURIComponent(url.username),
    decodeURIComponent(url.password),
  ];
  if (url.pathname.length > 1) parts.push(url.pathname);
  return parts.filter((p) => p.length >= 8 && p !== url.origin && p !== `${url.origin}/` && p !== '/');
}

/**
 * Remembers every secret value resolved in this process and scrubs them out of strings and
 * JSON-like values, in every encoding (see secretEncodings). Every record write, step output and
 * log line goes through `redact`, so a secret never reaches DynamoDB, the state payload, execution
 * history or logs.
 */
export class Redactor {
  readonly #values = new Set<string>();
  /** Every encoding of every value, longest first, so a secret containing another is replaced whole. */
  #spellings: string[] = [];

  /** Registers a secret value (values shorter than 4 characters are too ambiguous to scrub and are refused by the resolver). */
  add(value: string): void {
    if (value.length === 0 || this.#values.has(value)) return;
    this.#values.add(value);
    const forms = [value, ...secretUrlParts(value)].flatMap(secretEncodings);
    this.#spellings = [...new Set([...this.#spellings, ...forms])].sort((a, b) => b.length - a.length);
  }

  get size(): number {
    return this.#values.size;
  }

  /** Replaces every known secret value inside `text`. */
  redactText(text: string): string {
    if (this.#values.size === 0) return text;
    let out = text;
    for (const v of this.#spellings) {
      if (out.includes(v)) out = out.split(v).join(REDACTED);
    }
    return out;
  }

  /** Deep copy of `value` with every known secret value replaced (object keys included). */
  redact<T>(value: T): T {
    if (this.#values.size === 0) return value;
    return this.#walk(value, 0) as T;
  }

  /** True when `value` (deeply) contains a known secret. */
  contains(value: unknown): boolean {
    if (this.#values.size === 0) return false;
    const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
    return this.#spellings.some((v) => text.includes(v));
  }

  #walk(value: unknown, depth: number): unknown {
    if (depth > 64) return value;
    if (typeof value === 'string') return this.redactText(value);
    if (Array.isArray(value)) return value.map((v) => this.#walk(v, depth + 1));
    if (value instanceof Error) {
      const copy = new Error(this.redactText(value.message));
      copy.name = value.name;
      if (value.stack) copy.stack = this.redactText(value.stack);
      return copy;
    }
    if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array) && !(value instanceof Date)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[this.redactText(k)] = this.#walk(v, depth + 1);
      return out;
    }
    return value;
  }
}
