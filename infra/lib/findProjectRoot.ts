// Locate the repository root (the directory with package-lock.json and workflows/) from any start
// directory, so the app works from source (tsx) and from infra/dist alike.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The nearest ancestor of `start` holding package-lock.json and a workflows/ directory. */
export function findProjectRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, 'package-lock.json')) && existsSync(join(dir, 'workflows'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no Stepforge project root (package-lock.json + workflows/) above ${start}`);
    dir = parent;
  }
}
