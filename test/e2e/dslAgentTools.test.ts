import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '@stepforge/cli';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { bufferIo, tempProject } from './support/testIo.js';

/**
 * A DSL agent that declares tools runs as an agent loop granted them: here the offline provider,
 * scripted, asks for `fs-list` on its first turn and answers on its second.
 */
describe('Embedded stack: a DSL agent step with the tools its agent declares', () => {
  const project = tempProject('sf-agent-tools-');
  let stack: EmbeddedStack;
  beforeAll(async () => {
    writeFileSync(join(project.dir, 'notes.txt'), 'hello\n');
    writeFileSync(
      join(project.dir, 'script.json'),
      JSON.stringify({
        steps: {
          look: [{ text: 'Let me look.', toolCalls: [{ tool: 'fs-list', args: { path: '.' } }] }, { text: 'There is a notes file.' }],
        },
      }),
    );
    writeFileSync(
      join(project.dir, 'agent.yaml'),
      [
        'document: { dsl: "1.0", name: agent-tools }',
        'agents:',
        '  lister: { instructions: "List files.", tools: [fs-list] }',
        'steps:',
        '  look: { call: agent, agent: lister, input_template: "what is here?" }',
        '',
      ].join('\n'),
    );
    stack = await openStack({
      projectDir: project.dir,
      inMemory: true,
      env: { STEPFORGE_LOG_LEVEL: 'SILENT', STEPFORGE_LOCAL_SCRIPT: join(project.dir, 'script.json'), STEPFORGE_FS_ROOT: project.dir },
    });
  });
  afterAll(async () => {
    await stack.close();
    project.remove();
  });

  it('calls the tool the model asks for, and ends on the next turn', async () => {
    const io = bufferIo(project.dir);
    expect(await main(['run', 'agent.yaml', '--json'], io)).toBe(0);
    const { runId, status, output } = JSON.parse(io.stdout());
    expect([status, output]).toEqual(['SUCCEEDED', '[offline:script] There is a notes file.']);
    const steps = await stack.runtime.runs.listSteps(runId);
    const tool = steps.find((s) => s.stepId.startsWith('look:tool'));
    expect(tool).toMatchObject({ status: 'SUCCEEDED' });
    expect(JSON.stringify(tool?.output)).toContain('notes.txt');
    expect(
      steps
        .filter((s) => s.stepId.startsWith('look:reason'))
        .map((s) => s.stepId)
        .sort(),
    ).toEqual(['look:reason#turn0', 'look:reason#turn1']);
    // runs show gives the step's answer (its last turn), not the listing its tool call returned.
    const shown = bufferIo(project.dir);
    expect(await main(['runs', 'show', runId], shown)).toBe(0);
    expect(shown.stdout()).toContain('  ✓ look');
    expect(shown.stdout()).toContain('      output: [offline:script] There is a notes file.\n');
    expect(shown.stdout()).not.toContain('notes.txt');
  });
});
