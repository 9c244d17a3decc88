// Where the chain loader's checks find source offsets. ChainLoader validates plain data and asks a
// locator for offsets, so one set of checks runs over the `yaml` Document (precise, every error) or
// over the fast parser's positions (valid documents only: its error-only answers decline).
import type { ScalarSpan } from '../source/scalarOffsets.js';

/** A data path from the document root: mapping keys and sequence indices. */
export type ChainPath = readonly (string | number)[];

/** What a node at a data path is (undefined: absent). Anchors and tags never reach the fast path. */
export type ChainNodeKind = 'map' | 'scalar' | 'other' | undefined;

/** Maps data paths of a parsed chain document to source offsets. */
export interface ChainLocator {
  /** The root's keys in source order with their offsets (key undefined when it is not a scalar). */
  topLevelKeys(): readonly { readonly key: string | undefined; readonly offset: number }[];
  /** The kind of the node at `path` ([] is the root). */
  kindAt(path: ChainPath): ChainNodeKind;
  /** Start offset of the node at `path` (0 when unknown). */
  offsetOf(path: ChainPath): number;
  /** The string scalar at `path`, for scalarOffsets. */
  scalar(path: ChainPath): ScalarSpan;
  /** Offset of the key of the entry at `path` (the `plan` in `plan: {…}`); 0 when absent. */
  keyOffset(path: ChainPath): number;
  /** Offset of the deepest existing node along `path` (a missing field points at its task). */
  offsetAt(path: ChainPath): number;
  /** Source length of the single-line scalar at `path`, else 1. */
  scalarLength(path: ChainPath): number;
  /** Source offset of character `index` of the string scalar at `path` (its start when unknown). */
  offsetInside(path: ChainPath, index: unknown): number;
}
