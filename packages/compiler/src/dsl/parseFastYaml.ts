// The fast path's parser: js-yaml (an order of magnitude faster than `yaml` on large documents) with
// its `listener` hook recording where each node opens and closes, from which FastYamlLocator derives
// the same locations the `yaml` Document gives. Anything it cannot reproduce exactly — tags, anchors,
// directives, keys that are not strings, empty values — makes it decline, never guess.
import { load, type State } from 'js-yaml';
import type { SourceText } from '../errors/SourceText.js';
import type { SourceLocation } from '../errors/StepforgeError.js';
import { FastPathDeclined, type DataPath, type DslLocator } from './DslLocator.js';
import { FAST_TAG_PREFIX, FAST_YAML_SCHEMA } from './fastYamlSchema.js';
import { offsetLocation } from './yamlNodes.js';

/** One composed node as js-yaml reported it: positions in js-yaml's input, its kind and its value. */
interface Event {
  readonly open: number;
  close: number;
  kind: string | null;
  result: unknown;
  children: Event[] | undefined;
  /** Filled by pairAll: a mapping's entries, or a sequence's items by index. */
  index?: Entries | (Event | undefined)[];
}

/**
 * A mapping's entries in source order: keys, and their key and value events interleaved (`events[2i]`,
 * `events[2i + 1]`, undefined for an empty value). Two arrays, not a Map per mapping: documents have thousands.
 */
interface Entries {
  readonly keys: string[];
  readonly events: (Event | undefined)[];
  /** Built on the first lookup in a large mapping, so lookups stay O(1) there. */
  byKey?: Map<string, number>;
}

/** The entry number of `key` in the mapping `node`, or -1. */
function entryOf(node: Event, key: string): number {
  const e = entries(node);
  if (e.keys.length > 32) e.byKey ??= new Map(e.keys.map((k, j) => [k, j]));
  return e.byKey ? (e.byKey.get(key) ?? -1) : e.keys.indexOf(key);
}

/** What parseFastYaml returns: the plain data and a locator over its source positions. */
export interface FastYaml {
  readonly data: unknown;
  readonly locator: DslLocator;
}

// js-yaml's state carries these too (not in @types/js-yaml).
type LoaderState = State & { tag: string | null; anchor: string | null };

/** Parses `text` with js-yaml; undefined when it fails or uses a construct the fast path does not reproduce. */
export function parseFastYaml(text: string, src: SourceText): FastYaml | undefined {
  const stack: Event[] = [];
  let root: Event | undefined;
  let unsupported = false;
  let data: unknown;
  try {
    data = load(text, {
      schema: FAST_YAML_SCHEMA,
      listener(type, s) {
        const state = s as LoaderState;
        if (type === 'open') {
          // A %YAML directive changes the schema in `yaml` (1.1), not in js-yaml.
          if (state.version !== null) unsupported = true;
          stack.push({ open: state.position, close: -1, kind: null, result: undefined, children: undefined });
          return;
        }
        const e = stack.pop()!;
        e.close = state.position;
        e.kind = state.kind;
        e.result = state.result;
        const tag = state.tag;
        if (state.anchor !== null || (tag !== null && tag !== '?' && !tag.startsWith(FAST_TAG_PREFIX))) unsupported = true;
        // `yaml` holds quoted scalars and flow collections that span lines to indentation rules js-yaml
        // does not check; such nodes are rare in workflows, so leave them to the precise path.
        else if (state.lineStart > e.open && e.kind !== null && spansLines(state.input, e.open, state.lineStart)) unsupported = true;
        const parent = stack[stack.length - 1];
        if (parent) (parent.children ??= []).push(e);
        else root = e;
      },
    });
  } catch {
    return undefined;
  }
  if (unsupported || root === undefined) return undefined;
  try {
    pairAll(root);
  } catch (e) {
    if (e instanceof FastPathDeclined) return undefined;
    throw e;
  }
  // js-yaml drops a leading BOM before reading, so its positions are one less than the text's.
  const shift = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  return { data, locator: new FastYamlLocator(root, src, shift) };
}

/**
 * Pairs every node's events with its data up front. Besides indexing, this proves every mapping key was
 * a plain string scalar: js-yaml and `yaml` turn other keys (`? `, `null:`, `[a]:`) into different strings.
 */
function pairAll(root: Event): void {
  const todo: Event[] = [unwrap(root)];
  for (let e = todo.pop(); e !== undefined; e = todo.pop()) {
    if (e.kind === 'mapping') {
      for (const x of entries(e).events) if (x) todo.push(x);
    } else if (e.kind === 'sequence') {
      for (const item of sequenceItems(e)) if (item) todo.push(item);
    }
  }
}

/** Locations from js-yaml's node positions, matching YamlDocumentLocator's wherever it answers. */
class FastYamlLocator implements DslLocator {
  constructor(private readonly root: Event, private readonly src: SourceText, private readonly shift: number) {}

  at(path: DataPath): { location: SourceLocation; depth: number } {
    const { node, depth } = this.walk(path);
    return { location: this.location(node), depth };
  }

  keyAt(path: DataPath, key: string): SourceLocation | undefined {
    // Like yamlNodes' keyNode over nodeAtPath: the deepest existing node along the path is searched.
    const { node } = this.walk(path);
    if (node.kind !== 'mapping') return undefined;
    const i = entryOf(node, key);
    return i < 0 ? undefined : this.location(entries(node).events[2 * i]!);
  }

  inString(): SourceLocation {
    // Only errors need positions inside strings, and errors are the precise path's job.
    throw new FastPathDeclined('positions inside strings come from the precise path');
  }

  private walk(path: DataPath): { node: Event; depth: number } {
    let node = unwrap(this.root);
    let depth = 0;
    for (const seg of path) {
      if (typeof seg === 'symbol') break;
      const next = child(node, seg);
      if (next === undefined) break;
      node = next;
      depth++;
    }
    return { node, depth };
  }

  /** The node's first line, as nodeLocation gives it for the `yaml` node with the same range start. */
  private location(e: Event): SourceLocation {
    const text = this.src.text;
    const start = contentStart(text, e.open + this.shift);
    const c = text.charCodeAt(start);
    let end: number;
    if (e.kind === null) {
      // An empty value: `yaml` places an empty scalar where js-yaml reports nothing.
      throw new FastPathDeclined('no position for an empty value');
    } else if (c === 0x22 /* " */ || c === 0x27 /* ' */ || c === 0x7b /* { */ || c === 0x5b /* [ */) {
      end = e.close + this.shift;
    } else if (e.kind === 'scalar' && c !== 0x7c /* | */ && c !== 0x3e /* > */) {
      // A plain scalar ends at its last non-blank character; js-yaml may stop after blanks or at a comment.
      end = e.close + this.shift;
      while (end > start && isBlank(text.charCodeAt(end - 1))) end--;
    } else {
      // Block collections and block scalars: `yaml`'s range runs past the first line, so the rest of it counts.
      end = text.length;
    }
    if (end <= start) throw new FastPathDeclined('empty node');
    return offsetLocation(this.src, start, end);
  }
}

/** js-yaml composes a node twice when it first tries it as a mapping key: the outer one keeps the inner's result. */
function unwrap(e: Event): Event {
  let x = e;
  while (x.children?.length === 1 && x.children[0]!.kind === x.kind && Object.is(x.children[0]!.result, x.result)) x = x.children[0]!;
  return x;
}

function child(node: Event, seg: string | number): Event | undefined {
  if (node.kind === 'mapping') {
    // A number matches the key spelled with its digits, as childNode does.
    const i = entryOf(node, String(seg));
    if (i < 0) return undefined;
    const value = entries(node).events[2 * i + 1];
    if (value === undefined) throw new FastPathDeclined('no position for an empty value');
    return value;
  }
  if (node.kind === 'sequence' && typeof seg === 'number') {
    const items = sequenceItems(node);
    if (seg < 0 || seg >= items.length) return undefined;
    const item = items[seg];
    if (item === undefined) throw new FastPathDeclined('no position for an empty item');
    return item;
  }
  return undefined;
}

/**
 * Pairs a mapping's child events with its keys, in source order: each key is a string scalar event,
 * followed by its value's event unless the value is empty. Anything else (complex keys, flow pairs)
 * declines. A trailing empty event is js-yaml's failed attempt at reading one more key.
 */
function entries(node: Event): Entries {
  if (node.index !== undefined && !Array.isArray(node.index)) return node.index;
  const map: Entries = { keys: [], events: [] };
  const obj = node.result as Record<string, unknown>;
  const kids = node.children ?? [];
  let i = 0;
  while (i < kids.length) {
    const k = unwrap(kids[i++]!);
    if (k.kind === null && i === kids.length) break;
    const key = k.result;
    // js-yaml rejects duplicate keys itself.
    if (k.kind !== 'scalar' || typeof key !== 'string' || !Object.prototype.hasOwnProperty.call(obj, key)) {
      throw new FastPathDeclined('unsupported mapping key');
    }
    const want = obj[key];
    const v = i < kids.length ? unwrap(kids[i]!) : undefined;
    map.keys.push(key);
    if (v !== undefined && v.kind !== null && Object.is(v.result, want)) {
      map.events.push(k, v);
      i++;
    } else if (want === null) {
      // An empty value: js-yaml may or may not have composed an (empty) node for it.
      if (v !== undefined && v.kind === null) i++;
      map.events.push(k, undefined);
    } else throw new FastPathDeclined('unpaired mapping value');
  }
  if (map.keys.length !== Object.keys(obj).length) throw new FastPathDeclined('unpaired mapping key');
  node.index = map;
  return map;
}

function sequenceItems(node: Event): (Event | undefined)[] {
  if (Array.isArray(node.index)) return node.index;
  const arr = node.result as unknown[];
  const kids = node.children ?? [];
  const items: (Event | undefined)[] = [];
  let i = 0;
  for (const item of arr) {
    const k = i < kids.length ? unwrap(kids[i]!) : undefined;
    if (k !== undefined && k.kind !== null && Object.is(k.result, item)) {
      items.push(k);
      i++;
    } else if (item === null) {
      if (k !== undefined && k.kind === null) i++;
      items.push(undefined);
    } else throw new FastPathDeclined('unpaired sequence item');
  }
  if (i !== kids.length) throw new FastPathDeclined('unpaired sequence node');
  node.index = items;
  return items;
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
