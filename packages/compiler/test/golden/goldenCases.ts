// The golden corpus: every case under cases/ compiled with a stable file name (so manifests match).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileDocument, type CompileResult } from '@stepforge/compiler';

/** Directory of this corpus. */
export const GOLDEN_DIR = dirname(fileURLToPath(import.meta.url));

/** Case file names, sorted. */
export function goldenCases(): string[] {
  return readdirSync(join(GOLDEN_DIR, 'cases'))
    .filter((f) => f.endsWith('.yaml'))
    .sort();
}

/** The case's base name (`c01-sequence.chain.yaml` → `c01-sequence`). */
export function caseName(file: string): string {
  return file.replace(/\.chain\.yaml$|\.yaml$/, '');
}

/** Compiles one case as `cases/<file>`. */
export function compileCase(file: string, options: { express?: boolean } = {}): CompileResult {
  return compileDocument(readFileSync(join(GOLDEN_DIR, 'cases', file), 'utf8'), { file: `cases/${file}`, ...options });
}
