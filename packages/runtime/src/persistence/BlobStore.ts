import { createHash } from 'node:crypto';
import { PutItemCommand, QueryCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { RuntimeError } from '../errors/RuntimeError.js';
import { marshallItem, type Db } from './Db.js';
import { isRefValue, type OutputRef, type RefValue } from '@stepforge/contract';

// DynamoDB items are capped at 400 KB; stay well under with room for keys.
const CHUNK = 300_000;
// Stored texts kept in memory after a read, by total length: a run's view refreshes, `runs show` and the
// steps that read one large output many times (a for_each's items) read each blob once.
const READ_CACHE_CHARS = 32 * 1024 * 1024;

/**
 * Large step outputs, stored content-addressed in chunks and passed between states as a small
 * reference; `resolveRefs` turns references back into values before the next step sees them.
 */
export class BlobStore {
  /** Blob text by sha256, oldest first. A blob is content-addressed and never rewritten, so a read text stays true. */
  readonly #read = new Map<string, string>();
  #readChars = 0;

  constructor(private readonly db: Db) {}

  /** Stores `value` when its JSON exceeds `maxInlineBytes`; returns either the value or a reference. */
  async maybeStore(value: unknown, maxInlineBytes: number): Promise<{ value: unknown; ref?: OutputRef }> {
    const json = JSON.stringify(value ?? null);
    if (Buffer.byteLength(json) <= maxInlineBytes) return { value };
    const ref = await this.put(json);
    return { value: { $ref: ref } satisfies RefValue, ref };
  }

  async put(json: string): Promise<OutputRef> {
    const safe = this.db.redactor.redactText(json);
    const id = createHash('sha256').update(safe).digest('hex');
    const n = Math.max(1, Math.ceil(safe.length / CHUNK));
    // Through the commands client (values marshalled here), as the step records it sits beside:
    // on the embedded stack's owner that client sends item operations as plain JSON.
    for (let i = 0; i < n; i++) {
      await this.db.commands.send(
        new PutItemCommand({
          TableName: this.db.tableName,
          Item: marshallItem({
            pk: `BLOB#${id}`,
            sk: `CHUNK#${String(i).padStart(5, '0')}`,
            data: safe.slice(i * CHUNK, (i + 1) * CHUNK),
            chunks: n,
          }),
        }),
      );
    }
    return { ref: `dynamodb:${this.db.tableName}/BLOB#${id}`, bytes: Buffer.byteLength(safe), sha256: id };
  }

  /** The stored value (a fresh copy on every call: callers may change what they get). */
  async get(ref: OutputRef): Promise<unknown> {
    const cached = this.#read.get(ref.sha256);
    if (cached !== undefined) return JSON.parse(cached);
    const text = await this.#readText(ref);
    this.#remember(ref.sha256, text);
    return JSON.parse(text);
  }

  #remember(id: string, text: string): void {
    if (text.length > READ_CACHE_CHARS / 4) return;
    this.#read.set(id, text);
    this.#readChars += text.length;
    for (const [old, t] of this.#read) {
      if (this.#readChars <= READ_CACHE_CHARS) break;
      this.#read.delete(old);
      this.#readChars -= t.length;
    }
  }

  async #readText(ref: OutputRef): Promise<string> {
    const id = ref.sha256;
    const parts: string[] = [];
    let start: Record<string, AttributeValue> | undefined;
    let expected = 0;
    do {
      const r = await this.db.commands.send(
        new QueryCommand({
          TableName: this.db.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': { S: `BLOB#${id}` } },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const it of r.Items ?? []) {
        parts.push(String(it.data?.S));
        expected = Number(it.chunks?.N);
      }
      start = r.LastEvaluatedKey;
    } while (start);
    if (parts.length === 0 || parts.length !== expected) {
      throw new RuntimeError('NotFound', `stored output ${ref.ref} is missing or incomplete (${parts.length}/${expected} chunks)`);
    }
    return parts.join('');
  }

  /** Deeply replaces every OutputRef in `value` by the stored value. */
  async resolveRefs<T>(value: T, depth = 0): Promise<T> {
    if (depth > 64) return value;
    if (typeof value === 'string') return (value.includes(REF_IN_TEXT_MARK) ? await this.resolveRefsInText(value) : value) as T;
    if (isRefValue(value)) return (await this.get(value.$ref)) as T;
    if (Array.isArray(value)) return (await Promise.all(value.map((v) => this.resolveRefs(v, depth + 1)))) as T;
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = await this.resolveRefs(v, depth + 1);
      return out as T;
    }
    return value;
  }

  /**
   * A template that places a by-reference output in text (`"Summarise ${steps.big.output}"`) gets the
   * reference as the ASL's `$string` renders it; the stored value goes in its place, rendered as the
   * ASL renders an inline value (strings as they are, anything else as compact JSON). A reference
   * inside an array or object that `$string` rendered (a for_each's output: one value per iteration)
   * is an element of that JSON, so the structure is rendered again with the stored values as JSON
   * (a stored string keeps its quotes), as `$string` renders the same array held inline.
   */
  private async resolveRefsInText(text: string): Promise<string> {
    let out = '';
    let from = 0;
    for (const m of text.matchAll(REF_IN_TEXT)) {
      // Inside a structure already rendered again.
      if (m.index < from) continue;
      const parsed = JSON.parse(m[0]) as unknown;
      if (!isRefValue(parsed)) continue;
      const span = enclosingJson(text, m.index, m.index + m[0].length, from);
      if (span) {
        out += text.slice(from, span.start) + JSON.stringify(await this.resolveRefs(span.value));
        from = span.end;
        continue;
      }
      const stored = await this.get(parsed.$ref);
      out += text.slice(from, m.index) + (typeof stored === 'string' ? stored : JSON.stringify(stored ?? null));
      from = m.index + m[0].length;
    }
    return from === 0 ? text : out + text.slice(from);
  }
}

/**
 * The outermost JSON array or object in `text[floor..]` that holds `text[start..end)` as one of its
 * values (not merely beside it), or undefined: the brackets around it are followed outwards, each
 * time the nearest opening bracket whose matching close lies beyond the span, while what they
 * enclose parses as JSON.
 */
function enclosingJson(
  text: string,
  start: number,
  end: number,
  floor: number,
): { start: number; end: number; value: unknown } | undefined {
  let found: { start: number; end: number; value: unknown } | undefined;
  let s = start;
  let e = end;
  for (let tries = 0; tries < 64; tries++) {
    const before = text[s - 1];
    const after = text[e];
    // A value of a structure is preceded by '[', ',' or ':' and followed by ']', ',' or '}'.
    if (!(before === '[' || before === ',' || before === ':') || !(after === ']' || after === ',' || after === '}')) return found;
    let open = -1;
    let close = -1;
    for (let i = s - 1; i >= floor && open < 0; i--) {
      const c = text[i];
      if (c !== '[' && c !== '{') continue;
      const j = matchingClose(text, i);
      if (j >= e) {
        open = i;
        close = j;
      }
    }
    if (open < 0) return found;
    let value: unknown;
    try {
      value = JSON.parse(text.slice(open, close + 1));
    } catch {
      return found;
    }
    found = { start: open, end: close + 1, value };
    s = open;
    e = close + 1;
  }
  return found;
}

/** Index of the bracket closing the one at `open` (JSON strings skipped), or -1. */
function matchingClose(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/** How a `{"$ref"}` value reads once JSONata's `$string` put it in text (keys in the order BlobStore writes them). */
const REF_IN_TEXT = /\{"\$ref":\{"ref":"(?:[^"\\]|\\.)*","bytes":\d+,"sha256":"[0-9a-f]{64}"\}\}/g;
const REF_IN_TEXT_MARK = '{"$ref":{"ref":';
