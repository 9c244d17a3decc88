import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { RuntimeError } from '../errors/RuntimeError.js';
import { confinePath, namesStateDir, type PathJail } from './confinePath.js';
import type { ToolDefinition } from './ToolDefinition.js';

export { confinePath } from './confinePath.js';

/** Policy of the filesystem tools: one allowed root (and the paths inside it no tool may touch), a read cap. */
export interface FsPolicy extends PathJail {
  readonly maxReadBytes: number;
}

/** `fs-list`: the entries of a directory under the allowed root. */
export function fsListTool(policy: FsPolicy): ToolDefinition {
  return {
    name: 'fs-list',
    description: 'List the entries of a directory inside the allowed workspace directory.',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string', description: 'directory, relative to the workspace' } },
      additionalProperties: false,
    },
    sideEffect: false,
    async run(args) {
      const dir = await confinePath(policy, args.path ?? '.');
      const entries = await readdir(dir, { withFileTypes: true });
      // The state folder and the secret store are left out of listings, as they are refused to reads.
      const shown = [];
      for (const e of entries) {
        if (namesStateDir(e.name)) continue;
        if (
          await confinePath(policy, join(dir, e.name), { allowMissing: true }).then(
            () => false,
            (err: unknown) => (err as { details?: { reason?: string } }).details?.reason === 'protected',
          )
        )
          continue;
        shown.push(e);
      }
      return {
        path: relative(await realpath(policy.root), dir) || '.',
        entries: shown
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
        throw new RuntimeError(
          'PolicyDenied',
          `"${String(args.path)}" is ${s.size} bytes, over the ${policy.maxReadBytes}-byte read limit`,
          { details: { path: args.path, size: s.size, limit: policy.maxReadBytes } },
        );
      }
      return { path: String(args.path), bytes: s.size, content: await readFile(file, 'utf8') };
    },
  };
}
