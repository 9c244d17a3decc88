import type { CliIo } from '../CliIo.js';
import { COMMAND_TEXT, type CommandName } from './commandText.js';

/** One sub-command: `run` gets the arguments after its name and returns the exit code. */
export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  /** The full text `stepforge NAME --help` prints; by default the usage line and the summary. */
  readonly help?: string;
  run(argv: readonly string[], io: CliIo): Promise<number>;
}

/** What `stepforge --help` lists for a command, and how to load the command itself. */
export interface CommandEntry {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  /**
   * Whether the command's module has a help text of its own (`Command.help`). Without one, `stepforge
   * NAME --help` prints the usage line and the summary above, and loads nothing: `run --help` reads
   * no embedded stack.
   */
  readonly ownHelp: boolean;
  /** Loads the command's module, and with it only what that command needs. */
  load(): Promise<Command>;
}

function entry(name: CommandName, load: () => Promise<{ default: Command }>, ownHelp = false): CommandEntry {
  return { name, ...COMMAND_TEXT[name], ownHelp, load: () => load().then((m) => m.default) };
}

/** What `stepforge NAME --help` prints for a command without a help text of its own. */
export function defaultHelp(c: { readonly usage: string; readonly summary: string }): string {
  return `Usage: stepforge ${c.usage}\n\n${c.summary.charAt(0).toUpperCase()}${c.summary.slice(1)}.\n`;
}

/**
 * Every command, by name, in the order `stepforge --help` lists them, with its texts (commandText.ts)
 * and how to load it. Each command's module is imported only when that command runs (the CLI bundle
 * for a command holds that command alone: scripts/bundleCli.mjs), so `validate` does not pay for the
 * embedded stack, nor `--help` for the compiler.
 */
export const COMMANDS: readonly CommandEntry[] = [
  entry('asl', () => import('./asl.js'), true),
  entry('compile', () => import('./compile.js')),
  entry('graph', () => import('./graph.js')),
  entry('validate', () => import('./validate.js')),
  entry('new', () => import('./new.js')),
  entry('run', () => import('./run.js')),
  entry('runs', () => import('./runs.js')),
  entry('approvals', () => import('./approvals.js')),
  entry('serve', () => import('./serve.js')),
  entry('store', () => import('./store.js')),
];

/** Every command, loaded (each module imported): for tests and tools that need them all. */
export async function loadCommands(): Promise<readonly Command[]> {
  return Promise.all(COMMANDS.map((c) => c.load()));
}
