// Small helpers over the `yaml` package's AST: find the node for a key or index, and turn a node's
// source range into a SourceLocation.
import { isMap, isScalar, isSeq, type Node } from 'yaml';
import { type SourceLocation, type SourceText } from '@stepforge/contract';

/** The value node under `key` of a mapping, or index `key` of a sequence. */
export function childNode(node: unknown, key: string | number): Node | undefined {
  if (isMap(node)) {
    for (const pair of node.items) {
      const k = isScalar(pair.key) ? pair.key.value : pair.key;
      if (k === key || (typeof key === 'number' && k === String(key))) return (pair.value ?? undefined) as Node | undefined;
    }
    return undefined;
  }
  if (isSeq(node) && typeof key === 'number') return (node.items[key] ?? undefined) as Node | undefined;
  return undefined;
}

/** The key node of `key` in a mapping (to point at a field's name rather than its value). */
export function keyNode(node: unknown, key: string): Node | undefined {
  if (!isMap(node)) return undefined;
  for (const pair of node.items) {
    const k = isScalar(pair.key) ? pair.key.value : undefined;
    if (k === key) return pair.key as Node;
  }
  return undefined;
}

/** Follows a data path (object keys and array indices) through the YAML AST as far as it exists. */
export function nodeAtPath(root: unknown, path: readonly PropertyKey[]): { node: Node | undefined; depth: number } {
  let node = root as Node | undefined;
  let depth = 0;
  for (const seg of path) {
    if (typeof seg === 'symbol') break;
    const next = childNode(node, seg);
    if (next === undefined) break;
    node = next;
    depth++;
  }
  return { node, depth };
}

/** Location of a source offset range (length capped to the first line). */
export function offsetLocation(src: SourceText, start: number, end: number): SourceLocation {
  const { line, column } = src.position(start);
  const lineLen = src.lineLength(line);
  const length = Math.max(1, Math.min(end - start, lineLen - column + 1));
  // Assigned onto `{}` rather than written as a literal with fields: V8 may pretenure a literal's
  // allocation site when its objects outlive a scavenge, as every step's location does, and
  // pretenured objects stay in the old space until a mark-compact (see docs/performance.md).
  const location = {} as { file?: string; line: number; column: number; length: number };
  if (src.file !== undefined) location.file = src.file;
  location.line = line;
  location.column = column;
  location.length = length;
  return location;
}

/** Location of a YAML node (its first line), or of the document start when unknown. */
export function nodeLocation(src: SourceText, node: Node | undefined | null): SourceLocation {
  const range = node?.range;
  if (!range) return offsetLocation(src, 0, 1);
  return offsetLocation(src, range[0], range[1]);
}

/** The `yaml` options of the precise path, shared by every loader (duplicate keys are errors). */
export const PRECISE_PARSE_OPTIONS = { prettyErrors: false, uniqueKeys: true } as const;
