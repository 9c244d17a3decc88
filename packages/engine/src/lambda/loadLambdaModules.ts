import { existsSync, statSync } from 'node:fs';
import { extname, isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LambdaHandler } from './createLambdaInvoker.js';

/** Why a `NAME=module` Lambda could not be registered; match on `code`. */
export type LambdaModuleErrorCode =
  'lambda_spec_invalid' | 'lambda_name_taken' | 'lambda_module_not_found' | 'lambda_module_not_loadable' | 'lambda_handler_missing';

/** A user Lambda that cannot be registered: a malformed spec, a module that does not load, no `handler`. */
export class LambdaModuleError extends Error {
  override readonly name = 'LambdaModuleError';
  constructor(
    readonly code: LambdaModuleErrorCode,
    message: string,
    /** The module file, when the spec got as far as naming one. */
    readonly file?: string,
  ) {
    super(message);
  }
}

// Lambda function names: letters, digits, `-` and `_`, up to 64 characters (the Lambda API's rule).
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const LOADABLE = new Set(['.js', '.mjs', '.cjs']);

/** `NAME=module` taken apart: the function name and the module path as written. */
export function parseLambdaSpec(spec: string): { name: string; module: string } {
  const eq = spec.indexOf('=');
  const name = eq === -1 ? '' : spec.slice(0, eq);
  const module = eq === -1 ? '' : spec.slice(eq + 1);
  if (!FUNCTION_NAME.test(name) || module === '') {
    throw new LambdaModuleError(
      'lambda_spec_invalid',
      `--lambda takes NAME=MODULE, a function name (letters, digits, '-' and '_', at most 64) and a JavaScript module exporting \`handler\`; got '${spec}'`,
    );
  }
  return { name, module };
}

/**
 * Loads user Lambdas given as `NAME=module` (module paths relative to `cwd`): each module must load
 * and export a function `handler(event, context)`, as a Node.js Lambda does. State machines call
 * them by function name or ARN, directly or through `arn:aws:states:::lambda:invoke`. `reserved`
 * names are taken by the stack's own handlers.
 */
export async function loadLambdaModules(
  specs: readonly string[],
  cwd: string,
  reserved: ReadonlySet<string> = new Set(),
  /** How a module is imported by its file URL (a bundled CLI routes it through its launcher). */
  importModule: (url: string) => Promise<Record<string, unknown>> = (url) => import(url) as Promise<Record<string, unknown>>,
): Promise<Record<string, LambdaHandler>> {
  const handlers: Record<string, LambdaHandler> = {};
  for (const spec of specs) {
    const { name, module } = parseLambdaSpec(spec);
    if (reserved.has(name) || Object.prototype.hasOwnProperty.call(handlers, name)) {
      throw new LambdaModuleError(
        'lambda_name_taken',
        `--lambda ${spec}: the function name '${name}' is ${reserved.has(name) ? "one of Stepforge's own step handlers" : 'given twice'}; pick another name`,
      );
    }
    const file = isAbsolute(module) ? module : resolve(cwd, module);
    if (!existsSync(file) || !statSync(file).isFile()) {
      throw new LambdaModuleError(
        'lambda_module_not_found',
        `--lambda ${spec}: no file ${file}; give the path of a JavaScript module (relative to ${cwd})`,
        file,
      );
    }
    if (!LOADABLE.has(extname(file))) {
      throw new LambdaModuleError(
        'lambda_module_not_loadable',
        `--lambda ${spec}: ${file} is not a JavaScript module (.js, .mjs or .cjs); compile it to JavaScript first`,
        file,
      );
    }
    let mod: Record<string, unknown>;
    try {
      mod = await importModule(pathToFileURL(file).href);
    } catch (e) {
      throw new LambdaModuleError(
        'lambda_module_not_loadable',
        `--lambda ${spec}: ${file} failed to load: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`,
        file,
      );
    }
    // A CommonJS module's exports arrive as `default` too.
    const handler = mod.handler ?? (mod.default as Record<string, unknown> | undefined)?.handler;
    if (typeof handler !== 'function') {
      const names = Object.keys(mod).filter((k) => k !== 'default');
      throw new LambdaModuleError(
        'lambda_handler_missing',
        `--lambda ${spec}: ${file} exports no function named 'handler' (it exports ${names.length > 0 ? names.join(', ') : 'nothing'}); export \`handler(event, context)\` as a Node.js Lambda does`,
        file,
      );
    }
    handlers[name] = handler as LambdaHandler;
  }
  return handlers;
}
