import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { RuntimeError } from '../errors/RuntimeError.js';
import { importFile } from './importFile.js';
import type { UserFunctionFile } from './resolveUserFunction.js';
import { resolveUserFunction } from './resolveUserFunction.js';

/** The context a user function gets: secrets by id and by binding name, and the run and step it serves. */
export interface UserFunctionContext {
  readonly secrets: Record<string, string>;
  readonly runId: string;
  readonly stepId: string;
  readonly workflow: string;
}

/** A user function: `export default async function (input, { secrets, runId, stepId }) { … }` (or a named export). */
export type UserFunction = (input: unknown, context: UserFunctionContext) => unknown;

/**
 * Imports user function `name` from the functions folder: `<dir>/<name>.ts|.mts|.js|.mjs`, or
 * `<file>#<export>` (see resolveUserFunction). Embedded, TypeScript files are imported directly
 * (the process runs under tsx or vitest); on AWS the folder is bundled into the function Lambda as
 * JavaScript. A Python module is refused here: the function step runs it through the Python worker.
 */
export async function loadUserFunction(dir: string, name: string): Promise<UserFunction> {
  const file = resolveUserFunction(dir, name);
  if (file.language === 'python')
    throw new RuntimeError('FunctionError', `function "${name}" is the Python module ${join(dir, file.relative)}, not a JavaScript one`);
  return importUserFunction(dir, file);
}

/** Imports a JavaScript user function module and picks its export. */
export async function importUserFunction(dir: string, file: UserFunctionFile): Promise<UserFunction> {
  const mod = await importFile(pathToFileURL(file.path).href);
  const base = file.relative
    .split('/')
    .pop()!
    .replace(/\.m?[jt]s$/, '');
  const fn = file.exportName ? mod[file.exportName] : (mod.default ?? mod.handler ?? mod[base]);
  if (typeof fn !== 'function')
    throw new RuntimeError('FunctionError', `module ${join(dir, file.relative)} has no function export ${file.exportName ?? 'default'}`);
  return fn as UserFunction;
}
