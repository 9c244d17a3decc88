import { FastPathDeclined } from '../source/Locator.js';
import type { FastLocator } from '../source/fastYaml.js';
import type { ChainLocator, ChainNodeKind, ChainPath } from './ChainLocator.js';
import type { ScalarSpan } from '../source/scalarOffsets.js';

/**
 * The fast chain locator: parseFastYaml's positions for what a valid document needs (the `chain:`
 * scalar, task and input keys); the offsets only errors use decline, since errors are the precise path's.
 */
export class FastChainLocator implements ChainLocator {
  constructor(
    private readonly data: unknown,
    private readonly loc: FastLocator,
  ) {}

  topLevelKeys(): { key: string; offset: number }[] {
    // parseFastYaml proved every key a string; an unknown one warns, which declines anyway.
    return Object.keys(this.data as object).map((key) => ({ key, offset: this.keyOffset([key]) }));
  }

  kindAt(path: ChainPath): ChainNodeKind {
    let v: unknown = this.data;
    for (const seg of path) {
      if (v === null || typeof v !== 'object' || !Object.prototype.hasOwnProperty.call(v, seg)) return undefined;
      v = (v as Record<string | number, unknown>)[seg];
    }
    return Array.isArray(v) ? 'other' : v !== null && typeof v === 'object' ? 'map' : 'scalar';
  }

  scalar(path: ChainPath): ScalarSpan {
    return this.loc.scalarSpan(path);
  }

  keyOffset(path: ChainPath): number {
    return this.loc.keyStart(path.slice(0, -1), String(path[path.length - 1])) ?? 0;
  }

  offsetOf(): number {
    return declined();
  }

  offsetAt(): number {
    return declined();
  }

  scalarLength(): number {
    return declined();
  }

  offsetInside(): number {
    return declined();
  }
}

function declined(): never {
  throw new FastPathDeclined('error locations come from the precise path');
}
