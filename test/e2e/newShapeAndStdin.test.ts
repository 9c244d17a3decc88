// As a user runs them, in their own processes: `stepforge new map-reduce` writes a workflow whose
// reduce is a pure step (the mappers' results in order, no model call), and `run --input @-` /
// `--input -` read the run's input from standard input.
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { STEPFORGE_BIN, tempProject } from './support/testIo.js';

/** Runs the real CLI in `cwd` with `stdin` as its standard input. */
function stepforge(cwd: string, argv: readonly string[], stdin = ''): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [STEPFORGE_BIN, ...argv], {
    cwd,
    input: stdin,
    encoding: 'utf8',
    timeout: 90_000,
    env: { ...process.env, STEPFORGE_LOG_LEVEL: 'SILENT' },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('Command: new map-reduce, then run with --input from standard input', () => {
  const project = tempProject('sf-new-stdin-');
  afterAll(() => project.remove());

  it("reduces with a pure step: the run's output is the mappers' results in order, and no model wrote it", () => {
    const made = stepforge(project.dir, ['new', 'map-reduce', '-o', 'mr.chain.yaml']);
    expect(made.code, made.err).toBe(0);
    expect(made.out).toBe('wrote mr.chain.yaml (map-reduce: split > [map_1@web-search & map_2@web-search & map_3@web-search] > reduce)\n');
    const r = stepforge(project.dir, ['run', 'mr.chain.yaml', '--input', '@-', '--json'], '{"task":"count the tide pools"}\n');
    expect(r.code, r.err).toBe(0);
    const result = JSON.parse(r.out) as { runId: string; status: string; output: unknown };
    expect(result.status).toBe('SUCCEEDED');
    // The offline provider echoes its prompt: each entry is a mapper's own answer, untouched.
    const split = '[offline:echo] Partition this work into exactly 3 numbered, non-overlapping parts: count the tide pools';
    expect(result.output).toEqual([1, 2, 3].map((i) => `[offline:echo] Process part ${i} (only that part) of:\n${split}`));
    // The reduce made no Lambda call: a pure step that succeeded with no step record and no tokens.
    const shown = stepforge(project.dir, ['runs', 'show', result.runId, '--json']);
    const steps = (JSON.parse(shown.out) as { steps: { id: string; kind: string; status: string; records: unknown[]; tokens: unknown }[] })
      .steps;
    expect(steps.find((s) => s.id === 'reduce')).toMatchObject({
      kind: 'pure',
      status: 'succeeded',
      records: [],
      tokens: { input: 0, output: 0 },
    });
  }, 120_000);

  it('reads --input - and --input @- from standard input, and locates bad JSON there', () => {
    for (const flag of ['-', '@-']) {
      const r = stepforge(project.dir, ['run', 'mr.chain.yaml', '--input', flag, '--json'], '{"task":"tides"}');
      expect(r.code, `${flag}: ${r.err}`).toBe(0);
      expect(JSON.parse(r.out)).toMatchObject({ status: 'SUCCEEDED' });
    }
    const bad = stepforge(project.dir, ['run', 'mr.chain.yaml', '--input', '@-', '--json'], '{"task": tides}');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out).error).toMatchObject({ class: 'invalid_input_json', file: '<stdin>', line: 1, column: 10 });
  }, 120_000);
});
