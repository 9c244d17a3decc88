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
    parsed = parseArgs({ args: withNegativeValuesInline(argv, options), allowPositionals: true, strict: true, options, tokens: true });
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

/**
 * argv with `--name -N` (a negative number as the value of a value option) read as `--name=-N`, so
 * that it gets the option's own range message: parseArgs refuses a separate value starting with '-'
 * as ambiguous (most often a forgotten value before the next flag), and no flag starts with a digit.
 */
function withNegativeValuesInline(argv: readonly string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return [...out, ...argv.slice(i)];
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    if (name !== undefined && options[name]?.type === 'string' && /^-\d/.test(argv[i + 1] ?? '')) out.push(`${arg}=${argv[++i]}`);
    else out.push(arg);
  }
  return out;
}
