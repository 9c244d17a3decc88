// The fast path for a document written as JSON (how Contenox chains are written): JSON.parse for
// the data, and a locator that scans the text once, on its first question, recording where each
// value and key starts and ends. It answers as the `yaml` Document's locator does (the same ranges,
// so the same line, column and length), at a fraction of the cost: `yaml`'s CST parser and the
// garbage it makes dominated loading a large chain. What it cannot answer exactly (a duplicate key,
// which the precise parse reports) makes it decline with FastPathDeclined.
import type { SourceLocation, SourceText } from '@stepforge/contract';
import { scalarOffsets } from './scalarOffsets.js';
import { FastPathDeclined, type DataPath, type Locator } from './Locator.js';
import { offsetLocation } from './yamlNodes.js';

/** One JSON value in the source: `[start, end)`, and its members when it is an object or array. */
interface JsonNode {
  readonly start: number;
  end: number;
  /** Object: key → [key start, key end, value]. */
  keys?: Map<string, [number, number, JsonNode]>;
  /** Array: the items. */
  items?: JsonNode[];
  /** A string value (the locator maps offsets inside it). */
  string?: boolean;
}

/** What parseJsonFast returns: the data and a locator over the text. */
export interface FastJson {
  readonly data: unknown;
  readonly locator: Locator;
}

/** The data and a lazy locator when `text` is a JSON object; undefined otherwise (the caller parses it as YAML). */
export function parseJsonFast(text: string, src: SourceText): FastJson | undefined {
  let i = 0;
  while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++;
  if (text[i] !== '{') return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  return { data, locator: new JsonLocator(text, src) };
}

/** Locates data paths in JSON text (see parseJsonFast); scans on first use. */
class JsonLocator implements Locator {
  #root?: JsonNode;

  constructor(
    private readonly text: string,
    private readonly src: SourceText,
  ) {}

  at(path: DataPath): { location: SourceLocation; depth: number } {
    const { node, depth } = this.walk(path);
    return { location: offsetLocation(this.src, node.start, node.end), depth };
  }

  keyAt(path: DataPath, key: string): SourceLocation | undefined {
    const k = this.walk(path).node.keys?.get(key);
    return k ? offsetLocation(this.src, k[0], k[1]) : undefined;
  }

  inString(path: DataPath, value: string, start: number, end: number): SourceLocation {
    const { node } = this.walk(path);
    if (node.string && JSON.parse(this.text.slice(node.start, node.end)) === value) {
      const map = scalarOffsets({ value, range: [node.start, node.end], type: 'QUOTE_DOUBLE' }, this.text);
      const s = map[Math.min(start, value.length)] ?? node.start;
      const e = map[Math.min(end, value.length)] ?? s + 1;
      return offsetLocation(this.src, s, Math.max(e, s + 1));
    }
    return offsetLocation(this.src, node.start, node.end);
  }

  private walk(path: DataPath): { node: JsonNode; depth: number } {
    let node = (this.#root ??= scan(this.text));
    let depth = 0;
    for (const seg of path) {
      if (typeof seg === 'symbol') break;
      const next = node.keys ? node.keys.get(String(seg))?.[2] : node.items && typeof seg === 'number' ? node.items[seg] : undefined;
      if (next === undefined) break;
      node = next;
      depth++;
    }
    return { node, depth };
  }
}

const isWs = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** One pass over text JSON.parse accepted: every value's range, iteratively (deep nesting cannot overflow the stack). */
function scan(text: string): JsonNode {
  let i = 0;
  const skip = () => {
    while (i < text.length && isWs(text.charCodeAt(i))) i++;
  };
  const stringEnd = (from: number): number => {
    let j = from + 1;
    for (;;) {
      const c = text.charCodeAt(j);
      if (c === 0x5c) j += 2;
      else if (c === 0x22) return j + 1;
      else j++;
    }
  };
  // Containers being filled, with the key awaiting its value (objects).
  const stack: { node: JsonNode; key?: [string, number, number] }[] = [];
  let root: JsonNode | undefined;
  const attach = (child: JsonNode) => {
    const top = stack[stack.length - 1];
    if (!top) {
      root = child;
      return;
    }
    if (top.node.items) top.node.items.push(child);
    else {
      const [k, ks, ke] = top.key!;
      // JSON.parse keeps the last of two equal keys; `yaml` reports them: the precise path's to report.
      if (top.node.keys!.has(k)) throw new FastPathDeclined(`duplicate key ${JSON.stringify(k)}`);
      top.node.keys!.set(k, [ks, ke, child]);
      top.key = undefined;
    }
  };
  for (;;) {
    skip();
    const top = stack[stack.length - 1];
    const c = text.charCodeAt(i);
    if (top && c === 0x2c /* , */) {
      i++;
      continue;
    }
    if (top && (c === 0x7d /* } */ || c === 0x5d) /* ] */) {
      i++;
      top.node.end = i;
      stack.pop();
      if (stack.length === 0) return top.node;
      continue;
    }
    if (top?.node.keys && top.key === undefined) {
      // A key, then its colon.
      const ks = i;
      const ke = stringEnd(i);
      const k = JSON.parse(text.slice(ks, ke)) as string;
      i = ke;
      skip();
      i++; // ':'
      top.key = [k, ks, ke];
      continue;
    }
    const start = i;
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const node: JsonNode = c === 0x7b ? { start, end: start, keys: new Map() } : { start, end: start, items: [] };
      i++;
      attach(node);
      stack.push({ node });
      continue;
    }
    let node: JsonNode;
    if (c === 0x22) {
      i = stringEnd(i);
      node = { start, end: i, string: true };
    } else {
      while (i < text.length && !/[\s,\]}]/.test(text[i]!)) i++;
      node = { start, end: i };
    }
    attach(node);
    if (stack.length === 0) return root!;
  }
}
