// `runs show` prints what a conditional or a loop produced, as it does for the other steps: these
// steps call no Lambda, so they have no step record, and their output is read from the history.
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliIn, example, tempProject } from './support/testIo.js';

const KINDS = `document: {dsl: "1.0", name: kinds, version: "0.1.0"}
agents: {W: ""}
input:
  items: {type: array, required: false, default: [1, 2]}
steps:
  check:
    call: conditional
    condition: \${ input.items != null }
  pick:
    call: conditional
    condition: true
    then: {call: agent, agent: W, input_template: "then branch"}
  each:
    call: for_each
    items: \${ input.items }
    as: item
    do:
      say: {call: agent, agent: W, input_template: "item \${ input.item }"}
`;

const CONTENOX = JSON.stringify({
  id: 'loopc',
  tasks: [
    { id: 'start', handler: 'noop', transition: { branches: [{ operator: 'default', goto: 'ask' }] } },
    {
      id: 'ask',
      handler: 'chat_completion',
      execute_config: { model: 'm', provider: 'local' },
      transition: {
        branches: [
          { operator: 'edge_traversed_at_least', edge: 'ask->pick', when: '2', goto: 'end' },
          { operator: 'default', goto: 'pick' },
        ],
      },
    },
    { id: 'pick', handler: 'route', transition: { branches: [{ operator: 'default', goto: 'ask' }] } },
  ],
});

describe('runs show: outputs of conditional and loop steps', () => {
  const project = tempProject('sf-show-loops-');
  afterAll(() => project.remove());
  const cli = cliIn(project.dir);

  let lastRunId: string | undefined;
  async function shown(file: string, input: string): Promise<string> {
    const run = await cli('run', file, '--input', input, '--json');
    expect(run.code, run.err).toBe(0);
    lastRunId = (JSON.parse(run.out) as { runId: string }).runId;
    const show = await cli('runs', 'show', lastRunId);
    expect(show.code, show.err).toBe(0);
    return show.out;
  }

  it('prints the output of a conditional (its boolean, or its branch), a for_each (every item) and a while (the last round)', async () => {
    writeFileSync(join(project.dir, 'kinds.yaml'), KINDS);
    const out = await shown('kinds.yaml', '{}');
    expect(out).toMatch(/✓ check .*\n {6}output: true\n/);
    expect(out).toMatch(/✓ pick .*\n {6}output: \[offline:echo\] then branch\n/);
    expect(out).toMatch(/✓ each .*\n {6}output: \["\[offline:echo\] item 1","\[offline:echo\] item 2"\]\n/);
    // --json carries the same output (a preview, as the records' are), on the step: it has no records to hold it.
    const json = JSON.parse((await cli('runs', 'show', lastRunId!, '--json')).out) as {
      steps: { id: string; output?: string; records: unknown[] }[];
    };
    expect(json.steps.find((s) => s.id === 'check')).toMatchObject({ output: 'true', records: [] });
    expect(json.steps.find((s) => s.id === 'each')?.output).toBe('["[offline:echo] item 1","[offline:echo] item 2"]');

    copyFileSync(example('while-loop.yaml'), join(project.dir, 'while-loop.yaml'));
    const loop = await shown('while-loop.yaml', '{"question":"Why?","rounds":2}');
    expect(loop).toMatch(/✓ refine .*\n {6}output: \[offline:echo\] Round 1: improve the answer to 'Why\?'\.\n/);
  });

  it("prints the output of a Contenox chain's noop task, run before its bounded loop", async () => {
    writeFileSync(join(project.dir, 'loopc.json'), CONTENOX);
    const out = await shown('loopc.json', 'hi');
    expect(out).toMatch(/✓ start .*\n {6}output: hi\n/);
    expect(out).toMatch(/✓ pick .*\n {6}output: \[offline:echo\] \[offline:echo\] \[offline:echo\] hi\n/);
  });
});
