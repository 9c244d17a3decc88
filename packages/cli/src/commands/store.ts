import { parseCommandArgs } from './parseCommandArgs.js';
import { EXIT_OK, UsageError } from '../CliIo.js';
import type { Command } from './registry.js';
import { COMMAND_TEXT } from './commandText.js';

const { summary: SUMMARY, usage: USAGE } = COMMAND_TEXT.store;

/** `stepforge store repair`: repairs a damaged run store in place, keeping a copy of it as it was. */
const command: Command = {
  name: 'store',
  summary: SUMMARY,
  usage: USAGE,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(argv, { json: { type: 'boolean', default: false } }, USAGE);
    if (positionals.length !== 1 || positionals[0] !== 'repair') {
      throw new UsageError(`store needs repair${positionals.length > 0 ? ` (got ${positionals.map((p) => `'${p}'`).join(' ')})` : ''}`);
    }
    const { repairStore } = await import('@stepforge/embedded');
    const r = await repairStore(io.cwd);
    if (values.json) io.out(JSON.stringify({ store: r.store, state: r.state, copy: r.copy ?? null }) + '\n');
    else if (r.state === 'absent') io.out(`no run store in ${r.store}: nothing to repair\n`);
    else io.out(`repaired ${r.store}; the store as it was is kept in ${r.copy}\n`);
    return EXIT_OK;
  },
};
export default command;
