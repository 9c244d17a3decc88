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
  try {
    return parseArgs({ args: [...argv], allowPositionals: true, strict: true, options });
  } catch (e) {
    throw usageFrom(e, usage);
  }
}
