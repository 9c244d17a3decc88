import { describe, expect, it } from 'vitest';
import { COMMANDS, loadCommands } from './registry.js';

describe('Module: commands/registry', () => {
  describe('Const: COMMANDS', () => {
    it('lists each command once; each module is the command its entry names, with the texts of commandText.ts', async () => {
      const loaded = await loadCommands();
      expect(COMMANDS.map((c) => c.name)).toEqual([...new Set(COMMANDS.map((c) => c.name))]);
      expect(COMMANDS.map((c) => ({ name: c.name, summary: c.summary, usage: c.usage }))).toEqual(
        loaded.map((c) => ({ name: c.name, summary: c.summary, usage: c.usage })),
      );
    });

    it("says which commands have a help text of their own, so that the others' --help loads nothing", async () => {
      const loaded = await loadCommands();
      expect(COMMANDS.map((c) => ({ name: c.name, ownHelp: c.ownHelp }))).toEqual(
        loaded.map((c) => ({ name: c.name, ownHelp: c.help !== undefined })),
      );
      expect(COMMANDS.filter((c) => c.ownHelp).map((c) => c.name)).toEqual(['asl']);
    });
  });
});
