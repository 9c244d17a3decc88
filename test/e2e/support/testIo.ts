// Shared helpers of the end-to-end tests: a buffered CliIo, temp project dirs, the examples dir.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliIo } from '@stepforge/cli';

/** The repository root (examples/ and workflows/ live here). */
export const REPO = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
/** Absolute path of an example file. */
export const example = (name: string) => join(REPO, 'examples', name);

/** A CliIo writing into buffers. */
export interface BufferIo extends CliIo {
  readonly stdout: () => string;
  readonly stderr: () => string;
  reset(): void;
}

/** A buffered, non-TTY CliIo rooted at `cwd`. */
export function bufferIo(cwd: string, env: NodeJS.ProcessEnv = {}): BufferIo {
  let out = '';
  let err = '';
  return {
    out: (t) => { out += t; },
    err: (t) => { err += t; },
    isTTY: false,
    cwd,
    env: { STEPFORGE_LOG_LEVEL: 'SILENT', ...env },
    stdout: () => out,
    stderr: () => err,
    reset() { out = ''; err = ''; },
  };
}

/** A fresh temp project directory and its remover. */
export function tempProject(prefix = 'sf-e2e-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
