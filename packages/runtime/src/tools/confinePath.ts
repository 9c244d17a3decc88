import { lstat, realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { RuntimeError } from '../errors/RuntimeError.js';

/** Where the filesystem tools (and the shell tool's path arguments) may reach. */
export interface PathJail {
  /** The one directory tools may see. */
  readonly root: string;
  /**
   * Files and folders no tool may touch wherever they are (the secret store). Every folder named
   * `.stepforge` (any case) is refused as well: it holds the stack's runs, its secrets and its keys.
   */
  readonly protectedPaths?: readonly string[];
}

/** The folder of the project's own state, which no tool may read, list or write. */
export const STATE_DIR_NAME = '.stepforge';

/** The device files a command may name although they are outside the root: harmless sinks and sources. */
const HARMLESS_DEVICES = new Set(['/dev/null']);

/** Kernel filesystems that expose this machine's processes and devices (another process's environment among them). */
const SYSTEM_TREES = ['/proc', '/sys', '/dev'];

function inside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

function denied(requested: string, message: string, reason: string): RuntimeError {
  return new RuntimeError('PolicyDenied', message, { details: { path: requested, reason } });
}

/** True when a path segment names the project's state folder, in any letter case (a case-insensitive disk opens it under any spelling). */
export function namesStateDir(p: string): boolean {
  return p.split(/[\\/]+/).some((seg) => seg.toLowerCase() === STATE_DIR_NAME);
}

async function identity(p: string): Promise<{ dev: number; ino: number } | undefined> {
  const s = await stat(p).catch(() => undefined);
  return s ? { dev: s.dev, ino: s.ino } : undefined;
}

/** Options of one confinement check. */
export interface ConfineOptions {
  /** Accept a path that does not exist yet (a shell argument that may be a pattern, not a file); its existing part is still checked. */
  readonly allowMissing?: boolean;
}

/**
 * Resolves `requested` (relative to the root, or absolute) the way the kernel will when the tool
 * opens it, and refuses it unless the result stays inside the root:
 * - lexically (`..`, absolute paths elsewhere) and after resolving symlinks, by the kernel's rule
 *   (`link/..` is the parent of the link's target, not the folder holding the link), so a symlink
 *   out, dangling or not, is refused;
 * - never inside a `.stepforge` folder or at a protected path (the secret store), compared by
 *   path in any case and by device and inode, so a second name of the secret file is refused too;
 * - a regular file with more than one hard link is refused: its other names may be anywhere on
 *   the same disk (a link made to a file outside), and they cannot be found without a scan;
 * - nothing under /proc, /sys or /dev, except /dev/null.
 * Returns the real path.
 */
export async function confinePath(jail: PathJail, requested: unknown, options: ConfineOptions = {}): Promise<string> {
  if (typeof requested !== 'string' || requested.length === 0) {
    throw new RuntimeError('InvalidInput', 'path must be a non-empty string');
  }
  if (requested.includes('\0')) throw denied(requested, 'path contains a NUL byte', 'nul');
  if (HARMLESS_DEVICES.has(requested)) return requested;
  const root = await realpath(jail.root);
  if (namesStateDir(root)) {
    // A root chosen inside the state folder would make everything in it look like ordinary files.
    throw denied(
      requested,
      `the allowed directory ${root} is inside a ${STATE_DIR_NAME} folder, which tools may not touch; set STEPFORGE_FS_ROOT to the project folder`,
      'protected',
    );
  }
  const raw = isAbsolute(requested) ? requested : `${root}${sep}${requested}`;
  const lexical = resolve(raw);
  if (!inside(root, lexical) && !inside(resolve(jail.root), lexical)) {
    throw denied(requested, `path "${requested}" is outside the allowed directory`, 'traversal');
  }
  if (namesStateDir(requested)) {
    throw denied(requested, `path "${requested}" is inside the project's ${STATE_DIR_NAME} folder, which tools may not touch`, 'protected');
  }
  await refuseProtected(jail, requested, lexical, false);
  const real = await realTarget(raw, requested, options);
  if (!inside(root, real)) {
    throw denied(requested, `path "${requested}" resolves outside the allowed directory (symlink escape)`, 'symlink');
  }
  if (SYSTEM_TREES.some((t) => inside(t, real)) && !HARMLESS_DEVICES.has(real)) {
    throw denied(requested, `path "${requested}" is in a system tree (${SYSTEM_TREES.join(', ')})`, 'system');
  }
  if (namesStateDir(relative(root, real))) {
    throw denied(
      requested,
      `path "${requested}" resolves into the project's ${STATE_DIR_NAME} folder, which tools may not touch`,
      'protected',
    );
  }
  await refuseProtected(jail, requested, real, true);
  const s = await lstat(real).catch(() => undefined);
  if (s?.isFile() && s.nlink > 1) {
    throw denied(
      requested,
      `path "${requested}" is a file with ${s.nlink} hard links; tools refuse such files, whose other names may be outside the allowed directory (copy the file instead of linking it)`,
      'hardlink',
    );
  }
  return real;
}

/**
 * The real path of `raw` as the kernel resolves it. A missing path (when allowed) is its longest
 * existing ancestor's real path plus the rest, which may not climb (`missing/..`) and may not start
 * with a dangling symlink (creating through one writes wherever it points).
 */
async function realTarget(raw: string, requested: string, options: ConfineOptions): Promise<string> {
  try {
    return await realpath(raw);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT' && (e as NodeJS.ErrnoException).code !== 'ENOTDIR') throw e;
  }
  const parts = raw.split(sep);
  for (let k = parts.length - 1; k >= 1; k--) {
    const head = parts.slice(0, k).join(sep) || sep;
    const real = await realpath(head).catch(() => undefined);
    if (real === undefined) continue;
    const next = `${head === sep ? '' : head}${sep}${parts[k]}`;
    if ((await lstat(next).catch(() => undefined))?.isSymbolicLink()) {
      throw denied(requested, `path "${requested}" goes through a dangling symlink`, 'symlink');
    }
    if (!options.allowMissing) {
      throw new RuntimeError('ToolError', `path "${requested}" does not exist`, { details: { path: requested } });
    }
    const rest = parts.slice(k).filter((p) => p !== '' && p !== '.');
    if (rest.includes('..')) throw denied(requested, `path "${requested}" climbs out of a folder that does not exist`, 'traversal');
    return resolve(real, ...rest);
  }
  throw new RuntimeError('ToolError', `path "${requested}" does not exist`, { details: { path: requested } });
}

/** Refuses `candidate` (the lexical path, then the real one) when it is a protected path under any spelling, or another name of its file. */
async function refuseProtected(jail: PathJail, requested: string, candidate: string, real: boolean): Promise<void> {
  const target = real ? await identity(candidate) : undefined;
  for (const p of jail.protectedPaths ?? []) {
    const protectedReal = await realpath(p).catch(() => resolve(p));
    const same = [protectedReal, resolve(p)].some((q) => inside(q.toLowerCase(), candidate.toLowerCase()));
    const id = target && (await identity(protectedReal));
    if (same || (id && target && id.dev === target.dev && id.ino === target.ino)) {
      throw denied(requested, `path "${requested}" is the secret store, which tools may not touch`, 'protected');
    }
  }
}
