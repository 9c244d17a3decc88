import { expect } from 'vitest';

/** What both loaders' fast and precise paths return. */
interface LoadResult {
  readonly errors: readonly unknown[];
  readonly warnings: readonly unknown[];
}

/**
 * The fast-path contract shared by the DSL and chain loaders: the fast path either declines
 * (undefined) or returns exactly the precise result, and it may only answer for clean documents.
 * Returns whether the precise result was clean.
 */
export function expectFastPathAgrees<R extends LoadResult>(text: string, precise: R, fast: R | undefined): boolean {
  // A missing document.version is the one warning the fast path reports itself (too common to decline on).
  const clean = precise.errors.length === 0 && precise.warnings.every((w) => (w as { code?: string }).code === 'missing_version');
  if (fast !== undefined) {
    expect({ text, clean }).toEqual({ text, clean: true });
    expect(fast).toStrictEqual(precise);
  }
  return clean;
}
