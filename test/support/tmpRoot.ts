import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Vitest global setup: every test file, and every process a test spawns, makes its scratch folders
 * under one root of this run (`os.tmpdir()` reads TMPDIR at each call, and spawned processes inherit
 * it), and the root goes when the run ends. Tests that crash or time out before their own cleanup
 * leave nothing behind in the machine's temp folder, run after run.
 */
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'stepforge-tests-'));
  process.env.TMPDIR = root;
  return () => {
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
}
