import { describe, it, expect, afterAll } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '@stepforge/cli';
import { bufferIo, example, tempProject } from './support/testIo.js';

/**
 * Ended executions leave `.stepforge/engine` after the retention period (STEPFORGE_EXECUTION_RETENTION_DAYS,
 * 90 days by default, as Step Functions keeps a closed execution's history), while their runs stay
 * in DynamoDB: `runs show` still shows the run and its step records, with no history, and a fork
 * of it still starts from the recorded input.
 */
describe('Embedded stack: execution retention', () => {
  const project = tempProject('sf-retention-');
  afterAll(() => project.remove());
  const cli = async (env: Record<string, string>, ...argv: string[]) => {
    const io = bufferIo(project.dir, env);
    const code = await main(argv, io);
    return { code, out: io.stdout(), err: io.stderr() };
  };
  /** Each execution's one history file (events and checkpoints). */
  const historyFiles = () => readdirSync(join(project.dir, '.stepforge', 'engine', 'histories'));

  it('keeps a run whose execution has expired, and forks it from its recorded input', async () => {
    const first = JSON.parse((await cli({}, 'run', example('quickstart.chain.yaml'), '--input', '{"topic":"tides"}', '--json')).out) as {
      runId: string;
      status: string;
      output: string;
    };
    expect(first.status).toBe('SUCCEEDED');
    expect(historyFiles()).toHaveLength(1);
    // Kept for 90 days: the next process loads it.
    expect(JSON.parse((await cli({}, 'runs', 'show', first.runId, '--json')).out).historyEvents).toBeGreaterThan(10);
    expect(historyFiles()).toHaveLength(1);

    const [firstFile] = historyFiles();
    // A retention of a millisecond or so: a command that reads no longer shows it, and the next
    // process that holds the stack to write drops it.
    const shown = await cli({ STEPFORGE_EXECUTION_RETENTION_DAYS: '0.00000001' }, 'runs', 'show', first.runId, '--json');
    expect(shown.code).toBe(0);
    const details = JSON.parse(shown.out) as {
      run: { status: string; output: string };
      historyEvents: number;
      steps: { id: string; status: string; tokens: { input: number; output: number }; records: unknown[] }[];
    };
    expect(details.run).toMatchObject({ status: 'SUCCEEDED', output: first.output });
    expect(details.historyEvents).toBe(0);
    expect(details.steps.map((s) => [s.id, s.records.length])).toEqual([
      ['plan', 1],
      ['draft', 1],
      ['critique', 1],
      ['judge', 1],
    ]);
    // With no history, the steps are as their records say (succeeded, with their tokens), not "skipped".
    expect(details.steps.map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    expect(details.steps.every((s) => s.tokens.input > 0 && s.tokens.output > 0)).toBe(true);
    // A command that only reads writes nothing under .stepforge: the files stay until a writer drops them.
    expect(historyFiles()).toEqual([firstFile]);
    const text = (await cli({ STEPFORGE_EXECUTION_RETENTION_DAYS: '0.00000001' }, 'runs', 'show', first.runId)).out;
    expect(text).toMatch(/^ {2}✓ plan +succeeded /m);
    expect(text).toMatch(/^ {6}output: \[offline:echo\] Plan a short research note on tides/m);
    expect(text).not.toContain('skipped');
    expect(text).toContain(
      'history: none kept (dropped after the retention period, or unreadable); steps as their records in DynamoDB say',
    );

    const retried = await cli({ STEPFORGE_EXECUTION_RETENTION_DAYS: '0.00000001' }, 'runs', 'retry', first.runId, '--json');
    expect(retried.code).toBe(0);
    expect(JSON.parse(retried.out)).toMatchObject({ parentRunId: first.runId, status: 'SUCCEEDED', output: first.output });
    // The retry held the stack: the expired execution's files are gone, the retry's are there.
    expect(historyFiles()).toHaveLength(1);
    expect(historyFiles()).not.toContain(firstFile);
  }, 120_000);

  it('refuses a retention that is not a number of days, and opens nothing', async () => {
    const r = await cli({ STEPFORGE_EXECUTION_RETENTION_DAYS: 'a week' }, 'runs', 'list', '--json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).error).toMatchObject({
      class: 'invalid_config',
      message: "STEPFORGE_EXECUTION_RETENTION_DAYS must be a number of days, 0 or more, got 'a week'",
    });
    expect(existsSync(join(project.dir, '.stepforge', 'stack.json'))).toBe(false);
    expect(existsSync(join(project.dir, '.stepforge', 'stack.lock'))).toBe(false);
  });
});
