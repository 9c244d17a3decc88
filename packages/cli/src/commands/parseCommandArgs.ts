import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { usageFrom } from './documentIo.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Every command's flag parsing: node:util parseArgs, strict (an unknown or misspelt flag fails
 * at once), positionals allowed, and any parse failure turned into a UsageError (exit 2) that
 * ends with the command's usage line.
 */
export function parseCommandArgs<O extends Options>(
  argv: readonly string[],
  options: O,
  usage: string,
): ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; strict: true; options: O }>> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, strict: true, options, tokens: true });
  } catch (e) {
    throw usageFrom(e, usage);
  }
  // parseArgs keeps the last of a repeated value (`--input a --input b`): which one was meant is
  // a guess, so it is a usage error. A repeated switch (`--json --json`) says the same thing twice.
  const given = new Set<string>();
  for (const t of parsed.tokens) {
    if (t.kind !== 'option' || options[t.name]?.type !== 'string' || options[t.name]?.multiple) continue;
    if (given.has(t.name)) throw usageFrom(new Error(`${t.rawName} is given more than once: give it once`), usage);
    given.add(t.name);
  }
  const { tokens: _tokens, ...result } = parsed;
  return result as ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; strict: true; options: O }>>;
}
