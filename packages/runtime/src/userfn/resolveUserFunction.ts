import { statSync } from 'node:fs';
import { basename, isAbsolute, relative, resolve, sep } from 'node:path';
import { RuntimeError } from '../errors/RuntimeError.js';

/** The languages a user function may be written in. */
export type UserFunctionLanguage = 'python' | 'javascript';

/** Where a user function's module is, and how to call into it. */
export interface UserFunctionFile {
  readonly language: UserFunctionLanguage;
  /** The module file, absolute. */
  readonly path: string;
  /** The module file relative to the functions folder, with `/` separators (`text/wordCount.ts`). */
  readonly relative: string;
  /** The export (JavaScript) or function (Python) named after `#`, if any. */
  readonly exportName?: string;
}

const NAME = /^[A-Za-z0-9_-][A-Za-z0-9_./-]*$/;
/** Tried in this order for a name without an extension: a `.ts` beside the `.js` it compiles to is the source. */
const JS_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'] as const;
const EXTENSION = /\.(py|m?[jt]s)$/;

/**
 * Finds the module of user function `name` in `dir`: `NAME.py` (Python) or `NAME.ts|.mts|.js|.mjs`
 * (JavaScript), `NAME.py` / `NAME.js` … with its extension to say which, and `FILE#EXPORT` to name
 * the export. A name without an extension that finds both a Python and a JavaScript module is
 * refused (ConfigError): which one runs must not depend on a lookup order nobody wrote down.
 * The same rule decides at deploy time which Lambda serves the step (infra), so both agree.
 */
export function resolveUserFunction(dir: string, name: string): UserFunctionFile {
  const [file, exportName] = name.split('#', 2) as [string, string | undefined];
  if (!NAME.test(file) || file.includes('..') || (exportName !== undefined && !/^[A-Za-z_$][\w$]*$/.test(exportName))) {
    throw new RuntimeError('PolicyDenied', `invalid function name "${name}"`);
  }
  const root = resolve(dir);
  const at = (candidate: string) => {
    const p = resolve(root, candidate);
    const rel = relative(root, p);
    if (rel.startsWith('..') || isAbsolute(rel)) throw new RuntimeError('PolicyDenied', `function "${name}" is outside ${dir}`);
    return statSync(p, { throwIfNoEntry: false })?.isFile() ? { path: p, relative: rel.split(sep).join('/') } : undefined;
  };
  const found = (language: UserFunctionLanguage, hit: { path: string; relative: string }): UserFunctionFile => ({
    language,
    ...hit,
    ...(exportName !== undefined ? { exportName } : {}),
  });
  if (EXTENSION.test(file)) {
    const hit = at(file);
    if (hit) return found(file.endsWith('.py') ? 'python' : 'javascript', hit);
    throw new RuntimeError('FunctionError', `no user function "${name}" in ${dir} (looked for ${file})`);
  }
  const py = at(`${file}.py`);
  let js: { path: string; relative: string } | undefined;
  for (const ext of JS_EXTENSIONS) if ((js = at(`${file}${ext}`))) break;
  if (py && js) {
    throw new RuntimeError(
      'ConfigError',
      `function "${file}" is ambiguous: ${shownFolder(root)} has both ${py.relative} and ${js.relative}; ` +
        `name the one to run with its extension (function: ${file}.py or function: ${file}${js.relative.slice(js.relative.lastIndexOf('.'))}, ` +
        'declared under functions: with the same name), or remove the other',
      { details: { function: file, candidates: [py.relative, js.relative] } },
    );
  }
  if (py) return found('python', py);
  if (js) return found('javascript', js);
  throw new RuntimeError(
    'FunctionError',
    `no user function "${name}" in ${dir} (looked for ${[`${file}.py`, ...JS_EXTENSIONS.map((e) => `${file}${e}`)].join(', ')})`,
  );
}

/**
 * The functions folder as a message shows it: relative to the working directory (the project, where
 * the CLI runs; the bundle's root on Lambda) when inside it, so messages and logs hold no machine paths.
 */
function shownFolder(root: string): string {
  const rel = relative(process.cwd(), root);
  if (rel === '') return 'the functions folder (.)';
  return rel.startsWith('..') || isAbsolute(rel) ? `the functions folder (${basename(root)})` : rel.split(sep).join('/');
}
