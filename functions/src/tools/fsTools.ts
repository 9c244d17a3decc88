import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { RuntimeError } from '../errors/RuntimeError.js';
import type { ToolDefinition } from './ToolDefinition.js';

/** Policy of the filesystem tools: one allowed root, a read cap. */
export interface FsPolicy {
  readonly root: string;
  readonly maxReadBytes: number;
}

function inside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && !rel.startsWith(`..${sep}`));
}

/**
 * Resolves `requested` inside the allowed root, refusing traversal (`..`, absolute paths
 * elsewhere) lexically AND after resolving symlinks, so a link pointing out of the root is refused too.
 */
export async function confinePath(policy: FsPolicy, requested: unknown): Promise<string> {
  if (typeof requested !== 'string' || requested.length === 0) {
    throw new RuntimeError('InvalidInput', 'path must be a non-empty string');
  }
  if (requested.includes('\0')) throw new RuntimeError('PolicyDenied', 'path contains a NUL byte', { details: { path: requested } });
  const root = await realpath(policy.root);
  const target = resolve(root, requested);
  if (!inside(root, target)) {
    throw new RuntimeError('PolicyDenied', `path "${requested}" is outside the allowed directory`, { details: { path: requested, reason: 'traversal' } });
  }
  let real: string;
  try {
    real = await realpath(target);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      // A dangling symlink would still be a way out: refuse it when the link itself exists.
      const l = await lstat(target).catch(() => undefined);
      if (l?.isSymbolicLink()) throw new RuntimeError('PolicyDenied', `path "${requested}" is a dangling symlink`, { details: { path: requested, reason: 'symlink' } });
      throw new RuntimeError('ToolError', `path "${requested}" does not exist`, { details: { path: requested } });
    }
    throw e;
  }
  if (!inside(root, real)) {
    throw new RuntimeError('PolicyDenied', `path "${requested}" resolves outside the allowed directory (symlink escape)`, { details: { path: requested, reason: 'symlink' } });
  }
  return real;
}

/** `fs-list`: the entries of a directory under the allowed root. */
export function fsListTool(policy: FsPolicy): ToolDefinition {
  return {
    name: 'fs-list',
    description: 'List the entries of a directory inside the allowed workspace directory.',
    inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'directory, relative to the workspace' } }, additionalProperties: false },
    sideEffect: false,
    async run(args) {
      const dir = await confinePath(policy, args.path ?? '.');
      const entries = await readdir(dir, { withFileTypes: true });
      return {
        path: relative(await realpath(policy.root), dir) || '.',
        entries: entries
          .map((e) => ({ name: e.name, type: e.isDirectory() ? 'dir' : e.isSymbolicLink() ? 'symlink' : e.isFile() ? 'file' : 'other' }))
          .sort((a, b) => a.name.localeCompare(b.name)),
      };
    },
  };
}

/** `fs-read`: a UTF-8 file under the allowed root, up to the read cap. */
export function fsReadTool(policy: FsPolicy): ToolDefinition {
  return {
    name: 'fs-read',
    description: 'Read a UTF-8 text file inside the allowed workspace directory.',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
    sideEffect: false,
    async run(args) {
      const file = await confinePath(policy, args.path);
      const s = await stat(file);
      if (!s.isFile()) throw new RuntimeError('ToolError', `"${String(args.path)}" is not a file`);
      if (s.size > policy.maxReadBytes) {
        throw new RuntimeError('PolicyDenied', `"${String(args.path)}" is ${s.size} bytes, over the ${policy.maxReadBytes}-byte read limit`, { details: { path: args.path, size: s.size, limit: policy.maxReadBytes } });
      }
      return { path: String(args.path), bytes: s.size, content: await readFile(file, 'utf8') };
    },
  };
}
