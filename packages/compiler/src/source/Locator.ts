// Where the DSL loader's checks find source locations. The loader validates plain data (what YAML
// parsing produced) and asks a locator for the line:column of a data path only when it needs one, so
// the same checks run over either parser: the `yaml` Document (precise, used for every error) or the
// fast parser's positions (used for valid documents).
import type { SourceLocation } from '@stepforge/contract';

/** A data path: mapping keys and sequence indices from the document root. */
export type DataPath = readonly PropertyKey[];

/** Maps data paths of a parsed YAML document to source locations. */
export interface Locator {
  /** The node at `path`, or its deepest existing ancestor, and how many segments of `path` exist. */
  at(path: DataPath): { readonly location: SourceLocation; readonly depth: number };
  /** The key `key` of the mapping at `path` (a field's name rather than its value); undefined when absent. */
  keyAt(path: DataPath, key: string): SourceLocation | undefined;
  /** `[start, end)` of the decoded string `text` at `path`, mapped into the source (errors inside expressions). */
  inString(path: DataPath, text: string, start: number, end: number): SourceLocation;
}

/**
 * Thrown by the fast path when it cannot give the precise path's answer exactly (a diagnostic to
 * report, a construct it does not locate); loadDslDocument then runs the precise path.
 */
export class FastPathDeclined extends Error {
  override readonly name = 'FastPathDeclined';
}
