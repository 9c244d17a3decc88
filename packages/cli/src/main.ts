// First: zod's setting must be in place before any schema is built (see there).
import './zodJitless.js';
import { processIo, reportError, EXIT_USAGE, type CliIo } from './CliIo.js';
import { COMMANDS, defaultHelp, type CommandEntry } from './commands/registry.js';
import { onStackFailure } from '@stepforge/embedded/stackFailure';

/** Entry point of the `stepforge` binary; returns the process exit code. */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(helpText(COMMANDS));
    return name === undefined ? EXIT_USAGE : 0;
  }
  if (name === '--version') {
    io.out('stepforge 0.1.0\n');
    return 0;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) {
    io.err(`error[usage] unknown command '${name}'. Run 'stepforge --help' for the list of commands.\n`);
    return EXIT_USAGE;
  }
  // `stepforge run --help` (anywhere after the command) asks for that command's help, not a run.
  const helpAsked = rest.includes('--help') || rest.includes('-h');
  if (helpAsked && !entry.ownHelp) {
    io.out(defaultHelp(entry));
    return 0;
  }
  // Only the command named is loaded: the others' modules (the embedded stack, the compiler) stay unread.
  const command = await entry.load();
  if (helpAsked) {
    io.out(command.help ?? defaultHelp(command));
    return 0;
  }
  // The stack failing on its own (its store, mid-command) ends the command with that named error.
  const off = onStackFailure((e) => process.exit(reportError(io, e, rest.includes('--json'))));
  try {
    return await command.run(rest, io);
  } catch (e) {
    return reportError(io, e, rest.includes('--json'));
  } finally {
    off();
  }
}

function helpText(commands: readonly CommandEntry[]): string {
  const lines = ['Usage: stepforge <command> [options]', '', 'Commands:'];
  for (const c of commands) lines.push(`  ${c.usage.padEnd(58)} ${c.summary}`);
  return lines.join('\n') + '\n';
}
