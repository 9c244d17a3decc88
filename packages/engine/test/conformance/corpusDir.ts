// Where the AWS-recorded conformance corpus lives: `../shared/conformance` next to the repository
// root (worktrees and fresh clones alike), found from this file rather than from the working
// directory or a fixed absolute path, so the tests find it wherever the repository is checked out.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is packages/engine/test/conformance/corpusDir.ts). */
export const REPO_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..', '..');

/** The corpus directory: STEPFORGE_CONFORMANCE_DIR when set, else `<repo root>/../shared/conformance`. */
export function corpusDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const fromEnv = env.STEPFORGE_CONFORMANCE_DIR;
  return fromEnv ? resolve(fromEnv) : join(REPO_ROOT, '..', 'shared', 'conformance');
}

/** The corpus directory the tests use (shared with the other teams; read-only). */
export const CORPUS_DIR = corpusDir();

/**
 * Why the corpus cannot be used (undefined when it can): the tests that need it show this as the
 * reason they were skipped, so a missing corpus is visible in the output and never reads as a pass.
 */
export function corpusMissingReason(dir: string = CORPUS_DIR, sub = 'cases'): string | undefined {
  const want = join(dir, sub);
  if (existsSync(want)) return undefined;
  return `conformance corpus not found at ${want}: check out the shared folder next to the repository (../shared/conformance) or set STEPFORGE_CONFORMANCE_DIR`;
}

/** Prints the reason once per test file, so it shows even where skipped tests are folded away. */
export function warnCorpusMissing(reason: string | undefined): void {
  if (reason) console.warn(`[conformance] SKIPPED: ${reason}`);
}
