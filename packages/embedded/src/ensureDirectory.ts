import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { StepforgeError } from '@stepforge/compiler';
import { errnoReason } from './errnoReason.js';

/** A directory that cannot be made where nothing is in the way (ENOENT from mkdir under /proc). */
const why = (e: unknown) => errnoReason(e, { ENOENT: 'the file system does not allow a directory there' });

/**
 * Creates directory `path` and its missing parents, or finds it there; an `io` StepforgeError
 * naming what it is for (`what`, e.g. "the output directory (-o)") when it cannot be had: a file
 * in the way, no permission, a read-only or pseudo file system. One level at a time rather than
 * `mkdir -p`, whose recursive form never returns on Node 20 under /proc (ENOENT there, EEXIST above).
 */
export function ensureDirectory(path: string, what: string, hint?: string): void {
  const full = resolve(path);
  const missing: string[] = [];
  let at = full;
  for (;;) {
    let isDirectory: boolean | undefined;
    try {
      isDirectory = statSync(at).isDirectory();
    } catch (e) {
      // ENOTDIR: a file further up, which the walk comes to.
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw ioError(`${what} ${full} cannot be used: ${why(e)}`, hint);
    }
    if (isDirectory === true) break;
    if (isDirectory === false) throw ioError(`${what} ${full} cannot be created: ${at} is a file, not a directory`, hint);
    missing.unshift(at);
    const up = dirname(at);
    if (up === at) break;
    at = up;
  }
  for (const dir of missing) {
    try {
      mkdirSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST' && statSync(dir).isDirectory()) continue; // made meanwhile
      throw ioError(`${what} ${full} cannot be created: ${why(e)} (at ${dir})`, hint);
    }
  }
}

/** An `io` error about a file the command writes. */
export function ioError(message: string, hint?: string): StepforgeError {
  return new StepforgeError('io', message, hint !== undefined ? { hint } : {});
}
