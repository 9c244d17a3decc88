import { fileURLToPath } from 'node:url';

/**
 * The folder holding the Python side of user functions (packages/runtime/python: the embedded worker, the
 * Lambda bootstrap and the runner they share). The CLI's bundle copies it beside itself and puts
 * another module in this one's place (packages/cli/scripts/bundleCli.mjs).
 */
export function pythonSourceDir(): string {
  return fileURLToPath(new URL('../../python/', import.meta.url));
}
