import { isMap, isScalar, type Document, type Node, type Pair, type Scalar } from 'yaml';
import type { ChainLocator, ChainNodeKind, ChainPath } from './ChainLocator.js';
import { scalarOffsets, type ScalarSpan } from '../source/scalarOffsets.js';

/** The precise chain locator: the `yaml` Document's nodes and their source ranges. */
export class YamlChainLocator implements ChainLocator {
  private readonly keyOffsetCache = new Map<unknown, Map<unknown, number>>();

  constructor(
    private readonly doc: Document.Parsed,
    private readonly text: string,
  ) {}

  topLevelKeys(): { key: string | undefined; offset: number }[] {
    const root = this.doc.contents;
    if (!isMap(root)) return [];
    return (root.items as Pair<Node, Node>[]).map((pair) => ({
      key: isScalar(pair.key) ? String(pair.key.value) : undefined,
      offset: (pair.key as Node | null)?.range?.[0] ?? 0,
    }));
  }

  kindAt(path: ChainPath): ChainNodeKind {
    const node = this.node(path);
    if (node === undefined) return undefined;
    return isMap(node) ? 'map' : isScalar(node) ? 'scalar' : 'other';
  }

  offsetOf(path: ChainPath): number {
    return (this.node(path) as Node | null | undefined)?.range?.[0] ?? 0;
  }

  scalar(path: ChainPath): ScalarSpan {
    return this.node(path) as Scalar;
  }

  private node(path: ChainPath): unknown {
    return path.length === 0 ? this.doc.contents : this.doc.getIn(path, true);
  }

  offsetAt(path: ChainPath): number {
    for (let n = path.length; n > 0; n--) {
      const node = this.doc.getIn(path.slice(0, n), true) as Node | undefined;
      if (node !== undefined && node !== null && typeof node === 'object' && 'range' in node && node.range) {
        // A scalar is pointed at itself, as is a list item (it has no key); a mapping (a task, or the owner
        // of a missing field) at its key: `plan:` reads better than `{`.
        if ((n === path.length && isScalar(node)) || typeof path[n - 1] === 'number') return node.range[0];
        return this.keyOffset(path.slice(0, n));
      }
    }
    return 0;
  }

  scalarLength(path: ChainPath): number {
    const node = this.doc.getIn(path, true) as Node | undefined;
    if (node === undefined || node === null || !isScalar(node) || !node.range) return 1;
    const [start, end] = node.range;
    const text = this.text.slice(start, end);
    return text.includes('\n') || text.length === 0 ? 1 : text.length;
  }

  offsetInside(path: ChainPath, index: unknown): number {
    const node = this.doc.getIn(path, true) as Node | undefined;
    // Without a position inside the text, the error points at the value itself.
    if (node === undefined || !isScalar(node) || typeof node.value !== 'string' || typeof index !== 'number') return this.offsetOf(path);
    const map = scalarOffsets(node as Scalar, this.text);
    return map[Math.max(0, Math.min(index, map.length - 1))]!;
  }

  keyOffset(path: ChainPath): number {
    const parent = path.length === 1 ? this.doc.contents : (this.doc.getIn(path.slice(0, -1), true) as Node | undefined);
    if (parent === undefined || parent === null || !isMap(parent)) return 0;
    // Indexed once per mapping: loading a 2,000-task document asks for every task's key.
    let index = this.keyOffsetCache.get(parent);
    if (index === undefined) {
      index = new Map();
      for (const p of parent.items as Pair<Node, Node>[]) {
        if (isScalar(p.key) && p.key.range && !index.has(p.key.value)) index.set(p.key.value, p.key.range[0]);
      }
      this.keyOffsetCache.set(parent, index);
    }
    return index.get(path[path.length - 1]) ?? 0;
  }
}
