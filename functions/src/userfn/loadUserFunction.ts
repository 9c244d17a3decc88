import { access } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { RuntimeError } from '../errors/RuntimeError.js';
import { importFile } from './importFile.js';

/** A user function: `export default async function (input, { secrets, runId, stepId }) { … }` (or a named export). */
export type UserFunction = (input: unknown, context: { secrets: Record<string, string>; runId: string; stepId: string }) => unknown;

const NAME = /^[A-Za-z0-9_-][A-Za-z0-9_./-]*$/;

/**
 * Imports user function `name` from the functions folder: `<dir>/<name>.ts|.mts|.js|.mjs`, or
 * `<file>#<export>`. Embedded, TypeScript files are imported directly (the process runs under
 * tsx or vitest); on AWS the folder is bundled into the function Lambda as JavaScript.
 */
export async function loadUserFunction(dir: string, name: string): Promise<UserFunction> {
  const [file, exportName] = name.split('#', 2) as [string, string | undefined];
  if (!NAME.test(file) || file.includes('..')) throw new RuntimeError('PolicyDenied', `invalid function name "${name}"`);
  const root = resolve(dir);
  const hasExt = /\.(m?[jt]s)$/.test(file);
  const candidates = hasExt ? [file] : ['.ts', '.mts', '.js', '.mjs'].map((e) => `${file}${e}`);
  for (const c of candidates) {
    const p = resolve(root, c);
    const rel = relative(root, p);
    if (rel.startsWith('..') || isAbsolute(rel)) throw new RuntimeError('PolicyDenied', `function "${name}" is outside ${dir}`);
    try {
      await access(p);
    } catch {
      continue;
    }
    const mod = await importFile(pathToFileURL(p).href);
    const fn = exportName ? mod[exportName] : mod.default ?? mod.handler ?? mod[file.split('/').pop() ?? ''];
    if (typeof fn !== 'function') throw new RuntimeError('FunctionError', `module ${join(dir, c)} has no function export ${exportName ?? 'default'}`);
    return fn as UserFunction;
  }
  throw new RuntimeError('FunctionError', `no user function "${name}" in ${dir} (looked for ${candidates.join(', ')})`);
}
