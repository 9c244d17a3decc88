// The fast path's parser: js-yaml (an order of magnitude faster than `yaml` on large documents) with
// its `listener` hook recording where each node opens and closes, from which FastYamlLocator derives
// the same locations the `yaml` Document gives. Anything it cannot reproduce exactly — tags, anchors,
// directives, keys that are not strings, empty values — makes it decline, never guess.
import { load, type EventType, type State } from 'js-yaml';
import { type SourceText, type SourceLocation } from '@stepforge/contract';
import type { ScalarSpan } from './scalarOffsets.js';
import { FastPathDeclined, type DataPath, type Locator } from './Locator.js';
import { FAST_TAG_PREFIX, FAST_YAML_SCHEMA } from './fastYamlSchema.js';
import { offsetLocation } from './yamlNodes.js';

/** What parseFastYaml returns: the plain data and a locator over its source positions. */
export interface FastYaml {
  readonly data: unknown;
  readonly locator: FastLocator;
}

/** The fast locator, plus the raw source offsets the chain front-end maps its expression with. */
export interface FastLocator extends Locator {
  /** Source offset of key `key` in the mapping exactly at `path` (`yaml`'s key range start), or undefined. */
  keyStart(path: DataPath, key: string): number | undefined;
  /** The single-line scalar exactly at `path` with `yaml`'s range and style; declines anything else. */
  scalarSpan(path: DataPath): ScalarSpan;
}

// js-yaml's state carries these too (not in @types/js-yaml).
type LoaderState = State & { tag: string | null; anchor: string | null };

const NONE = 0;
const SCALAR = 1;
const MAPPING = 2;
const SEQUENCE = 3;
const KINDS: Readonly<Record<string, number>> = { scalar: SCALAR, mapping: MAPPING, sequence: SEQUENCE };

/**
 * Every node js-yaml composed, as columns indexed by node number: positions in js-yaml's input, kind,
 * value, and the tree as first-child / next-sibling links. Typed arrays rather than an object per
 * node: a 1,000-step document has tens of thousands of nodes, and objects that live through the whole
 * load are what the garbage collector pays for.
 */
class NodeTable {
  count = 0;
  open: Int32Array;
  close: Int32Array;
  kind: Uint8Array;
  first: Int32Array;
  next: Int32Array;
  last: Int32Array;
  /** For a mapping key: its value's node, or -1 for an empty value (filled by pairAll). */
  value: Int32Array;
  /** 1 for nodes that are mapping keys (filled by pairAll). */
  isKey: Uint8Array;
  /**
   * `new Array()`, not `[]`: V8 pretenures the allocation site of an array literal whose arrays outlive
   * a scavenge, and then this list's every growth was copied into the old space, where it stayed until a mark-compact.
   */
  readonly results: unknown[] = new Array<unknown>();
  /** Item nodes of a sequence (-1 for an empty item), built on first lookup. */
  readonly items = new Map<number, Int32Array>();
  /** Key → key node of each large mapping (filled by pairAll), so lookups there stay O(1). */
  readonly keys = new Map<number, Map<string, number>>();

  constructor(capacity: number) {
    this.open = new Int32Array(capacity);
    this.close = new Int32Array(capacity);
    this.kind = new Uint8Array(capacity);
    this.first = new Int32Array(capacity);
    this.next = new Int32Array(capacity);
    this.last = new Int32Array(capacity);
    this.value = new Int32Array(capacity);
    this.isKey = new Uint8Array(capacity);
  }

  add(open: number): number {
    if (this.count === this.open.length) this.grow();
    const id = this.count++;
    this.open[id] = open;
    this.first[id] = -1;
    this.next[id] = -1;
    this.last[id] = -1;
    // Filled at close (children close first); a slot now keeps the array packed.
    this.results.push(undefined);
    return id;
  }

  append(parent: number, child: number): void {
    const last = this.last[parent]!;
    if (last < 0) this.first[parent] = child;
    else this.next[last] = child;
    this.last[parent] = child;
  }

  /** js-yaml composes a node twice when it first tries it as a mapping key: the outer one keeps the inner's result. */
  unwrap(id: number): number {
    let x = id;
    for (;;) {
      const c = this.first[x]!;
      if (c < 0 || this.next[c] !== -1 || this.kind[c] !== this.kind[x] || !Object.is(this.results[c], this.results[x])) return x;
      x = c;
    }
  }

  private grow(): void {
    const n = this.open.length * 2;
    const wider = <T extends Int32Array | Uint8Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(n);
      b.set(a);
      return b;
    };
    this.open = wider(this.open);
    this.close = wider(this.close);
    this.kind = wider(this.kind);
    this.first = wider(this.first);
    this.next = wider(this.next);
    this.last = wider(this.last);
    this.value = wider(this.value);
    this.isKey = wider(this.isKey);
  }
}

/** Parses `text` with js-yaml; undefined when it fails or uses a construct the fast path does not reproduce. */
export function parseFastYaml(text: string, src: SourceText): FastYaml | undefined {
  const nodes = new NodeTable(256 + (text.length >> 3));
  const recorder = new NodeRecorder(nodes);
  let data: unknown;
  try {
    data = load(text, { schema: FAST_YAML_SCHEMA, listener: recorder.listen.bind(recorder) });
  } catch {
    return undefined;
  }
  const root = recorder.root;
  if (recorder.unsupported || root < 0) return undefined;
  try {
    pairAll(nodes, root);
  } catch (e) {
    if (e instanceof Error && e.name === 'FastPathDeclined') return undefined;
    throw e;
  }
  // js-yaml drops a leading BOM before reading, so its positions are one less than the text's.
  const shift = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  return { data, locator: new FastYamlLocator(nodes, nodes.unwrap(root), src, shift) };
}

/**
 * js-yaml's listener: records each node where it opens and closes. A class with the hook as a
 * method, not a closure made per parse: V8 drops a closure's optimised code with the closure at the
 * next mark-compact, and this runs for every node of the document.
 */
class NodeRecorder {
  readonly stack: number[] = [];
  root = -1;
  unsupported = false;
  constructor(readonly nodes: NodeTable) {}

  listen(type: EventType, s: State): void {
    const nodes = this.nodes;
    const stack = this.stack;
    const state = s as LoaderState;
    if (type === 'open') {
      // A %YAML directive changes the schema in `yaml` (1.1), not in js-yaml.
      if (state.version !== null) this.unsupported = true;
      stack.push(nodes.add(state.position));
      return;
    }
    const id = stack.pop()!;
    const kind = state.kind === null ? NONE : (KINDS[state.kind] ?? NONE);
    nodes.close[id] = state.position;
    nodes.kind[id] = kind;
    nodes.results[id] = state.result;
    const tag = state.tag;
    if (state.anchor !== null || (tag !== null && tag !== '?' && !tag.startsWith(FAST_TAG_PREFIX))) this.unsupported = true;
    // `yaml` holds quoted scalars and flow collections that span lines to indentation rules js-yaml
    // does not check; such nodes are rare in workflows, so leave them to the precise path.
    else if (kind !== NONE && state.lineStart > nodes.open[id]! && spansLines(state.input, nodes.open[id]!, state.lineStart))
      this.unsupported = true;
    if (stack.length > 0) nodes.append(stack[stack.length - 1]!, id);
    else this.root = id;
  }
}

/**
 * Pairs every mapping's key and value nodes up front, in source order: each key is a string scalar,
 * followed by its value's node unless the value is empty (a trailing empty node is js-yaml's failed
 * attempt at one more key). Besides indexing, this proves every key was a plain string: js-yaml and
 * `yaml` turn other keys (`? `, `null:`, `[a]:`) into different strings. Anything else declines.
 */
function pairAll(nodes: NodeTable, root: number): void {
  const { kind, first, next, results, value, isKey } = nodes;
  const todo: number[] = [nodes.unwrap(root)];
  for (let m = todo.pop(); m !== undefined; m = todo.pop()) {
    if (kind[m] === SEQUENCE) {
      for (let c = first[m]!; c >= 0; c = next[c]!) todo.push(nodes.unwrap(c));
      continue;
    }
    if (kind[m] !== MAPPING) continue;
    const obj = results[m] as Record<string, unknown>;
    let count = 0;
    for (let c = first[m]!; c >= 0;) {
      const k = nodes.unwrap(c);
      c = next[c]!;
      if (kind[k] === NONE && c < 0) break;
      const key = results[k];
      if (kind[k] !== SCALAR || typeof key !== 'string' || !Object.prototype.hasOwnProperty.call(obj, key)) {
        throw new FastPathDeclined('unsupported mapping key');
      }
      count++;
      isKey[k] = 1;
      const want = obj[key];
      const v = c >= 0 ? nodes.unwrap(c) : -1;
      if (v >= 0 && kind[v] !== NONE && Object.is(results[v], want)) {
        value[k] = v;
        todo.push(v);
        c = next[c]!;
      } else if (want === null) {
        // An empty value: js-yaml may or may not have composed an (empty) node for it.
        value[k] = -1;
        if (v >= 0 && kind[v] === NONE) c = next[c]!;
      } else throw new FastPathDeclined('unpaired mapping value');
    }
    // js-yaml rejects duplicate keys itself, so equal counts mean every key was paired.
    if (count !== Object.keys(obj).length) throw new FastPathDeclined('unpaired mapping key');
    if (count > 32) {
      const index = new Map<string, number>();
      for (let c = first[m]!; c >= 0; c = next[c]!) {
        const k = nodes.unwrap(c);
        if (isKey[k]) index.set(results[k] as string, k);
      }
      nodes.keys.set(m, index);
    }
  }
}

/** Locations from js-yaml's node positions, matching YamlDocumentLocator's wherever it answers. */
class FastYamlLocator implements FastLocator {
  constructor(
    private readonly nodes: NodeTable,
    private readonly root: number,
    private readonly src: SourceText,
    private readonly shift: number,
  ) {}

  at(path: DataPath): { location: SourceLocation; depth: number } {
    const { node, depth } = this.walk(path);
    return { location: this.location(node), depth };
  }

  keyAt(path: DataPath, key: string): SourceLocation | undefined {
    // Like yamlNodes' keyNode over nodeAtPath: the deepest existing node along the path is searched.
    const k = this.keyNode(this.walk(path).node, key);
    return k < 0 ? undefined : this.location(k);
  }

  keyStart(path: DataPath, key: string): number | undefined {
    const { node, depth } = this.walk(path);
    if (depth < path.length) return undefined;
    const k = this.keyNode(node, key);
    return k < 0 ? undefined : contentStart(this.src.text, this.nodes.open[k]! + this.shift);
  }

  scalarSpan(path: DataPath): ScalarSpan {
    const { node, depth } = this.walk(path);
    if (depth < path.length || this.nodes.kind[node] !== SCALAR) throw new FastPathDeclined('not a scalar');
    const text = this.src.text;
    const start = contentStart(text, this.nodes.open[node]! + this.shift);
    const [end, quoted] = this.scalarEnd(node, start);
    // Block and multi-line scalars: `yaml`'s range and folding are the precise path's to reproduce.
    const c = text.charCodeAt(start);
    if (c === 0x7c /* | */ || c === 0x3e /* > */ || end <= start || text.slice(start, end).includes('\n'))
      throw new FastPathDeclined('multi-line scalar');
    const type = !quoted ? 'PLAIN' : c === 0x22 ? 'QUOTE_DOUBLE' : 'QUOTE_SINGLE';
    return { value: this.nodes.results[node], range: [start, end, end], type };
  }

  inString(): SourceLocation {
    // Only errors need positions inside strings, and errors are the precise path's job.
    throw new FastPathDeclined('positions inside strings come from the precise path');
  }

  private walk(path: DataPath): { node: number; depth: number } {
    let node = this.root;
    let depth = 0;
    for (const seg of path) {
      if (typeof seg === 'symbol') break;
      const next = this.child(node, seg);
      if (next < 0) break;
      node = next;
      depth++;
    }
    return { node, depth };
  }

  /** The value node under `seg` (as childNode finds it), or -1. */
  private child(node: number, seg: string | number): number {
    const { kind } = this.nodes;
    if (kind[node] === MAPPING) {
      // A number matches the key spelled with its digits, as childNode does.
      const k = this.keyNode(node, String(seg));
      if (k < 0) return -1;
      const v = this.nodes.value[k]!;
      if (v < 0) throw new FastPathDeclined('no position for an empty value');
      return v;
    }
    if (kind[node] === SEQUENCE && typeof seg === 'number') {
      const items = this.itemsOf(node);
      if (seg < 0 || seg >= items.length) return -1;
      const item = items[seg]!;
      if (item < 0) throw new FastPathDeclined('no position for an empty item');
      return item;
    }
    return -1;
  }

  /** The key node of `key` in the mapping `node`, or -1. */
  private keyNode(node: number, key: string): number {
    const { kind, first, next, results, isKey } = this.nodes;
    if (kind[node] !== MAPPING) return -1;
    const index = this.nodes.keys.get(node);
    if (index) return index.get(key) ?? -1;
    for (let c = first[node]!; c >= 0; c = next[c]!) {
      const k = this.nodes.unwrap(c);
      if (isKey[k] && results[k] === key) return k;
    }
    return -1;
  }

  /** A sequence's item nodes in order (-1 for empty items, which js-yaml may not compose). */
  private itemsOf(node: number): Int32Array {
    const cached = this.nodes.items.get(node);
    if (cached) return cached;
    const { kind, first, next, results } = this.nodes;
    const arr = results[node] as unknown[];
    const items = new Int32Array(arr.length);
    let c = first[node]!;
    for (let i = 0; i < arr.length; i++) {
      const item = arr[i];
      const k = c >= 0 ? this.nodes.unwrap(c) : -1;
      if (k >= 0 && kind[k] !== NONE && Object.is(results[k], item)) {
        items[i] = k;
        c = next[c]!;
      } else if (item === null) {
        items[i] = -1;
        if (k >= 0 && kind[k] === NONE) c = next[c]!;
      } else throw new FastPathDeclined('unpaired sequence item');
    }
    if (c >= 0) throw new FastPathDeclined('unpaired sequence node');
    this.nodes.items.set(node, items);
    return items;
  }

  /** The node's first line, as nodeLocation gives it for the `yaml` node with the same range start. */
  private location(id: number): SourceLocation {
    const text = this.src.text;
    const kind = this.nodes.kind[id];
    if (kind === NONE) {
      // An empty value: `yaml` places an empty scalar where js-yaml reports nothing.
      throw new FastPathDeclined('no position for an empty value');
    }
    const start = contentStart(text, this.nodes.open[id]! + this.shift);
    const [end] = this.scalarEnd(id, start);
    if (end <= start) throw new FastPathDeclined('empty node');
    return offsetLocation(this.src, start, end);
  }

  /** Where `yaml`'s range for the node at `start` ends (its valueEnd), and whether it opens with a quote. */
  private scalarEnd(id: number, start: number): [end: number, quoted: boolean] {
    const text = this.src.text;
    const c = text.charCodeAt(start);
    if (c === 0x22 /* " */ || c === 0x27 /* ' */) return [this.nodes.close[id]! + this.shift, true];
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) return [this.nodes.close[id]! + this.shift, false];
    if (this.nodes.kind[id] === SCALAR && c !== 0x7c /* | */ && c !== 0x3e /* > */) {
      // A plain scalar ends at its last non-blank character; js-yaml may stop after blanks or at a comment.
      let end = this.nodes.close[id]! + this.shift;
      while (end > start && isBlank(text.charCodeAt(end - 1))) end--;
      return [end, false];
    }
    // Block collections and block scalars: `yaml`'s range runs past the first line, so the rest of it counts.
    return [text.length, false];
  }
}

/** Whether the node opened at `open` (js-yaml's input) starts with a quote or bracket before `closeLineStart`. */
function spansLines(input: string, open: number, closeLineStart: number): boolean {
  const start = contentStart(input, open);
  const c = input.charCodeAt(start);
  return start < closeLineStart && (c === 0x22 || c === 0x27 || c === 0x7b || c === 0x5b);
}

function isBlank(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** js-yaml opens a node before the separating blanks and comments that precede it. */
function contentStart(text: string, from: number): number {
  let p = from;
  for (;;) {
    const c = text.charCodeAt(p);
    if (isBlank(c) || c === 0xfeff) p++;
    else if (c === 0x23 /* # */) {
      const nl = text.indexOf('\n', p);
      if (nl < 0) return text.length;
      p = nl + 1;
    } else return p;
  }
}
