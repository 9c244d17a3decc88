import { isScalar, type Node, type Scalar } from 'yaml';
import { type SourceText, type SourceLocation } from '@stepforge/contract';
import { scalarOffsets } from './scalarOffsets.js';
import type { DataPath, Locator } from './Locator.js';
import { keyNode, nodeAtPath, nodeLocation, offsetLocation } from './yamlNodes.js';

/** The precise locator: walks the `yaml` package's Document nodes and their source ranges. */
export class YamlDocumentLocator implements Locator {
  constructor(
    private readonly root: Node | undefined,
    private readonly src: SourceText,
  ) {}

  at(path: DataPath): { location: SourceLocation; depth: number } {
    const { node, depth } = nodeAtPath(this.root, path);
    return { location: nodeLocation(this.src, node), depth };
  }

  keyAt(path: DataPath, key: string): SourceLocation | undefined {
    const k = keyNode(nodeAtPath(this.root, path).node, key);
    return k ? nodeLocation(this.src, k) : undefined;
  }

  inString(path: DataPath, text: string, start: number, end: number): SourceLocation {
    // The deepest existing node, as before the locator existed (a missing path points at its parent).
    const found = nodeAtPath(this.root, path).node;
    if (found && isScalar(found) && typeof found.value === 'string' && found.value === text && found.range) {
      const map = scalarOffsets(found as Scalar, this.src.text);
      const s = map[Math.min(start, text.length)] ?? found.range[0];
      const e = map[Math.min(end, text.length)] ?? s + 1;
      return offsetLocation(this.src, s, Math.max(e, s + 1));
    }
    return nodeLocation(this.src, found);
  }
}
