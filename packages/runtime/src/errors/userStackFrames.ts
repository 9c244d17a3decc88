import { pathToFileURL } from 'node:url';

/**
 * The frames of a JavaScript stack that are in the user's own code (the functions folder), with
 * that folder's path taken off (`at default (leaky.mjs:3:9)`). Every other frame names a file of
 * this installation (node_modules, the runtime's own sources, Node's internals), which says where
 * and how it is installed and is of no use to the workflow's author, so none is kept.
 */
export function userStackFrames(stack: string | undefined, userDir: string): string[] {
  if (!stack) return [];
  const dir = userDir.replace(/[\\/]+$/, '');
  const prefixes = [`${pathToFileURL(dir).href}/`, `${dir}/`, `${dir}\\`];
  const frames: string[] = [];
  for (const line of stack.split('\n').slice(1)) {
    const frame = line.trim();
    if (!frame.startsWith('at ') || !prefixes.some((p) => frame.includes(p))) continue;
    frames.push(prefixes.reduce((f, p) => f.split(p).join(''), frame));
  }
  return frames;
}
