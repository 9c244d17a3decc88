// `runs show` reads a step's output the way the next step received it, also when the output was
// too large to travel inline and was stored by reference: the person reading sees the text (and
// where it is stored), never the `{"$ref"}` placeholder the state machine carried.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliIn, example, tempProject } from './support/testIo.js';

describe('runs show: step outputs stored by reference', () => {
  const project = tempProject('sf-show-refs-');
  afterAll(() => project.remove());
  const cli = cliIn(project.dir);

  it('prints the stored text of each large step output, with the reference beside it', async () => {
    copyFileSync(example('quickstart.chain.yaml'), join(project.dir, 'quickstart.chain.yaml'));
    // The offline model echoes its prompt, so a 100 kB topic makes every step's output larger than the inline limit.
    const topic = 'tide '.repeat(20_000);
    const run = await cli('run', 'quickstart.chain.yaml', '--input', JSON.stringify({ topic }), '--json');
    expect(run.code, run.err).toBe(0);
    const runId = (JSON.parse(run.out) as { runId: string }).runId;

    const shown = await cli('runs', 'show', runId);
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).not.toContain('"$ref"');
    expect(shown.out).toMatch(/✓ plan .*\n {6}output: \[offline:echo\] Plan a short research note on tide tide /);
    expect(shown.out).toMatch(/\n {6}output stored as dynamodb:[\w-]+\/BLOB#[0-9a-f]{64}\n/);

    const json = await cli('runs', 'show', runId, '--json');
    const details = JSON.parse(json.out) as { steps: { id: string; records: { output: unknown; outputRef: string | null }[] }[] };
    const plan = details.steps.find((s) => s.id === 'plan')!.records[0]!;
    expect(String(plan.output)).toMatch(/^\[offline:echo\] Plan a short research note on tide /);
    expect(plan.outputRef).toMatch(/^dynamodb:[\w-]+\/BLOB#[0-9a-f]{64}$/);
  });
});
