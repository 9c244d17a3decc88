// The project's user functions folder for validate and compile, so that a `function:` name the
// runtime would refuse as ambiguous (echo.py beside echo.js) is reported before anything runs.
import { statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { UserFunctionsFolder } from '@stepforge/compiler';

/** The extensions the runtime looks for (functions' resolveUserFunction): Python, then JavaScript. */
const MODULE_EXTENSIONS = ['.py', '.ts', '.mts', '.js', '.mjs'] as const;

/**
 * STEPFORGE_FUNCTIONS_DIR, or the project's `functions/user`, when it is a folder; undefined otherwise
 * (nothing is known to check against).
 */
export function userFunctionsFolder(cwd: string, env: Readonly<Record<string, string | undefined>>): UserFunctionsFolder | undefined {
  const dir = resolve(cwd, env.STEPFORGE_FUNCTIONS_DIR || join('functions', 'user'));
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) return undefined;
  const rel = relative(cwd, dir);
  const shown = rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? dir : rel.split(sep).join('/');
  return {
    shown,
    modules(name) {
      // A name reaching outside the folder finds nothing here; the runtime refuses it by itself.
      const base = resolve(dir, name);
      const inside = relative(dir, base);
      if (inside.startsWith('..') || isAbsolute(inside)) return [];
      return MODULE_EXTENSIONS.filter((ext) => statSync(base + ext, { throwIfNoEntry: false })?.isFile()).map(
        (ext) => `${inside.split(sep).join('/')}${ext}`,
      );
    },
  };
}
