// What `stepforge new consensus` writes runs offline: the local provider's judge repeats a voter's
// answer verbatim, so the judge's check passes and the run succeeds, and progress never shows the
// judge succeeded and then failed.
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '@stepforge/cli';
import { bufferIo, tempProject } from './support/testIo.js';

describe('Command: new consensus, then run with the offline provider', () => {
  const project = tempProject('sf-new-consensus-');
  afterAll(() => project.remove());

  it("succeeds with one of the voters' answers, verbatim, as the output", async () => {
    const made = bufferIo(project.dir);
    expect(await main(['new', 'consensus', '-o', 'c.chain.yaml'], made)).toBe(0);
    const io = bufferIo(project.dir, { STEPFORGE_LOG_LEVEL: 'SILENT' });
    const code = await main(['run', 'c.chain.yaml', '--input', '{"task":"capital of France"}', '--in-memory'], io);
    expect(code, io.stderr()).toBe(0);
    const out = io.stdout();
    expect(out).toContain('\nSUCCEEDED  run ');
    expect(out).toContain('output:\n[offline:echo] Answer independently and concisely: capital of France\n');
    expect(out).toMatch(/✓ judge\s+succeeded/);
    expect(out).not.toMatch(/judge\s+failed/);
  }, 120_000);
});
