import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '@stepforge/cli';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import type { RunRecordView } from '../../packages/embedded/src/functionsRuntime.js';
import { bufferIo, cliIn, example, tempProject } from './support/testIo.js';

const QUICKSTART = example('quickstart.chain.yaml');

describe('Embedded stack: bad inputs get named errors and leave stored runs intact', () => {
  const project = tempProject();
  let stack: EmbeddedStack;
  let stored: RunRecordView[];
  let runId: string;
  beforeAll(async () => {
    stack = await openStack({ projectDir: project.dir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
    const io = bufferIo(project.dir);
    expect(await main(['run', QUICKSTART, '--input', '{"topic":"tides"}', '--json'], io)).toBe(0);
    runId = JSON.parse(io.stdout()).runId;
    stored = await stack.runtime.runs.listRuns();
    expect(stored).toHaveLength(1);
  });
  afterAll(async () => {
    // Every case above left the stored runs exactly as they were.
    expect(await stack.runtime.runs.listRuns()).toEqual(stored);
    await stack.close();
    project.remove();
  });

  const cli = cliIn(project.dir);

  it('reports a missing file as file_not_found', async () => {
    const r = await cli('run', 'nope.chain.yaml', '--json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toEqual({
      error: { class: 'file_not_found', message: 'cannot read nope.chain.yaml: ENOENT', line: 1, column: 1, file: 'nope.chain.yaml' },
    });
  });

  it('prints every error of an invalid document with --json, as validate does, and each in text', async () => {
    writeFileSync(
      join(project.dir, 'many.yaml'),
      [
        'document: {dsl: "1.0", name: many, version: "0.1.0"}',
        'agents: {W: ""}',
        'steps:',
        '  a: {call: agent, agent: W, retry: {max_attempts: many}}',
        '  b: {call: agent, agent: Q, input_template: "${ steps.nope.output }"}',
        '',
      ].join('\n'),
    );
    const r = await cli('run', 'many.yaml', '--json');
    expect(r.code).toBe(1);
    const out = JSON.parse(r.out);
    expect(
      out.errors.map((e: { class: string; message: string; line: number; column: number }) => [e.class, e.message, e.line, e.column]),
    ).toEqual([
      ['schema', 'steps.a.retry.max_attempts: expected a number, got "many"', 4, 52],
      ['unknown_agent', "unknown agent 'Q'", 5, 27],
      ['unknown_step', "unknown step 'nope'", 5, 50],
    ]);
    expect(out.error).toEqual(out.errors[0]);
    const text = await cli('run', 'many.yaml');
    expect(text.code).toBe(1);
    expect(text.err.match(/^error\[[a-z_]+\] many\.yaml:\d+:\d+/gm)).toEqual([
      'error[schema] many.yaml:4:52',
      'error[unknown_agent] many.yaml:5:27',
      'error[unknown_step] many.yaml:5:50',
    ]);
  });

  it('reports an invalid document with its location', async () => {
    writeFileSync(
      join(project.dir, 'bad.chain.yaml'),
      'chain: "a > > b"\ntasks:\n  a: { kind: model, prompt: hi }\n  b: { kind: model, prompt: hi }\n',
    );
    const r = await cli('run', 'bad.chain.yaml');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^error\[parse\] bad\.chain\.yaml:1:\d+: /);
    expect(r.err).toContain('1 | chain: "a > > b"');
  });

  it('reports bad input JSON as invalid_input_json at its position', async () => {
    const r = await cli('run', QUICKSTART, '--input', '{"topic": tides}');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^error\[invalid_input_json\] --input:1:11: the input is not valid JSON: /);
    const j = await cli('run', QUICKSTART, '--input', '{"topic": tides}', '--json');
    expect(JSON.parse(j.out).error).toMatchObject({ class: 'invalid_input_json', line: 1, column: 11 });
  });

  it('reports input that does not match the schema as invalid_input', async () => {
    const r = await cli('run', QUICKSTART, '--input', '{"topic": 42}', '--json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).error).toMatchObject({
      class: 'invalid_input',
      message: "invalid workflow input: field 'topic' must be a string, got integer",
    });
    const missing = await cli('run', QUICKSTART, '--json');
    expect(JSON.parse(missing.out).error).toMatchObject({
      class: 'invalid_input',
      message: expect.stringContaining("missing required field 'topic' (string)"),
    });
  });

  it("refuses an input over Step Functions' 256 KiB execution input as input_too_large, before recording a run", async () => {
    const topic = 'x'.repeat(300 * 1024);
    writeFileSync(join(project.dir, 'big.json'), JSON.stringify({ topic }));
    const r = await cli('run', QUICKSTART, '--input', '@big.json', '--json');
    expect(r.code).toBe(1);
    const bytes = Buffer.byteLength(JSON.stringify({ topic, $stepforge: {} }));
    expect(JSON.parse(r.out).error).toMatchObject({
      class: 'input_too_large',
      message: `the run's input is 300.0 KiB (${bytes} bytes) as Step Functions execution input; Step Functions takes at most 256 KiB (262144 bytes)`,
    });
    const text = await cli('run', QUICKSTART, '--input', '@big.json');
    expect(text.err).toContain('= help: pass large data by reference');
  });

  it('refuses input nested 10,000 deep as input_too_deep (not a stack overflow), before recording a run', async () => {
    writeFileSync(join(project.dir, 'deep.json'), `{"topic": "tides", "x": ${'['.repeat(10_000)}1${']'.repeat(10_000)}}`);
    const r = await cli('run', QUICKSTART, '--input', '@deep.json', '--json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).error).toMatchObject({
      class: 'input_too_deep',
      message:
        "the input is nested more than 32 levels deep (objects and arrays inside one another); a run's input may nest at most 32 levels",
    });
    const text = await cli('run', QUICKSTART, '--input', '@deep.json');
    expect(text.err).toMatch(/^error\[input_too_deep\] /);
    expect(text.err).not.toContain('internal');
  });

  it('reports an unknown run as unknown_run for show, retry and restart', async () => {
    for (const argv of [
      ['runs', 'show', 'no-such-run'],
      ['runs', 'retry', 'no-such-run'],
      ['runs', 'restart', 'no-such-run', '--from', 'plan'],
    ]) {
      const r = await cli(...argv, '--json');
      expect(r.code).toBe(1);
      expect(JSON.parse(r.out).error).toMatchObject({ class: 'unknown_run', message: "no run with id 'no-such-run'" });
    }
  });

  it('reports an unknown step for restart as unknown_step', async () => {
    const r = await cli('runs', 'restart', runId, '--from', 'drafts');
    expect(r.code).toBe(1);
    expect(r.err).toContain("error[unknown_step] workflow 'quickstart' has no step 'drafts'");
    expect(r.err).toContain('steps: plan, draft, critique, judge');
  });

  it('treats command-line mistakes as usage errors (exit 2)', async () => {
    expect((await cli('run')).code).toBe(2);
    expect((await cli('runs', 'restart', runId)).code).toBe(2);
    expect((await cli('run', QUICKSTART, '--provider', 'nope')).code).toBe(2);
    expect((await cli('approvals', 'approve')).code).toBe(2);
  });

  it('shows a stored run with its steps', async () => {
    const r = await cli('runs', 'show', runId, '--json');
    const shown = JSON.parse(r.out);
    expect(shown.run).toMatchObject({ runId, workflow: 'quickstart', status: 'SUCCEEDED' });
    expect(shown.steps.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
      ['plan', 'succeeded'],
      ['draft', 'succeeded'],
      ['critique', 'succeeded'],
      ['judge', 'succeeded'],
    ]);
    expect(shown.steps[0].records[0]).toMatchObject({ stepId: 'plan:reason#turn0', status: 'SUCCEEDED', attempts: 1 });
    const text = await cli('runs', 'show', runId);
    expect(text.out).toContain(`run ${runId}  quickstart  SUCCEEDED`);
    expect(text.out).toMatch(/✓ draft\s+succeeded/);
    const list = await cli('runs', 'list', '--workflow', 'quickstart', '--json');
    expect(JSON.parse(list.out).runs.map((x: { runId: string }) => x.runId)).toEqual([runId]);
  });

  it('says so when the workflow a list asks for never ran here, naming the ones that did', async () => {
    const r = await cli('runs', 'list', '--workflow', 'quickstrat');
    expect([r.code, r.out, r.err]).toEqual([
      0,
      "no runs: no workflow named 'quickstrat' has run here (the workflows here: quickstart)\n",
      '',
    ]);
    expect(JSON.parse((await cli('runs', 'list', '--workflow', 'quickstrat', '--json')).out)).toEqual({ runs: [] });
    // A workflow that ran, filtered to a status none of its runs has: just none.
    const none = await cli('runs', 'list', '--workflow', 'quickstart', '--status', 'FAILED');
    expect([none.code, none.out]).toEqual([0, 'no runs\n']);
  });
});

describe('Embedded stack: a project whose .stepforge is a file', () => {
  const project = tempProject();
  afterAll(() => project.remove());

  it('is error[io], exit 1, and the file is left as it was', async () => {
    writeFileSync(join(project.dir, '.stepforge'), 'not a directory\n');
    const io = bufferIo(project.dir);
    expect(await main(['run', QUICKSTART, '--input', '{"topic":"tides"}'], io)).toBe(1);
    expect(io.stderr()).toBe(
      `error[io] the embedded stack's data directory ${join(project.dir, '.stepforge')} cannot be created: ${join(project.dir, '.stepforge')} is a file, not a directory\n` +
        '  = help: the embedded stack keeps its runs under .stepforge/ in the project directory: move what is in the way aside, or run from a directory you can write to\n',
    );
    expect(readFileSync(join(project.dir, '.stepforge'), 'utf8')).toBe('not a directory\n');
  });
});

describe('Command: run (a workflow refused at compile time)', () => {
  const project = tempProject('sf-refused-');
  const cli = cliIn(project.dir);
  afterAll(() => project.remove());

  it('creates no .stepforge/ folder for a tier_limit or an invalid document', async () => {
    writeFileSync(
      join(project.dir, 'notools.chain.yaml'),
      'chain: "a > b"\ntasks:\n  a: { kind: model, prompt: hi }\n  b: { kind: model, prompt: there }\n',
    );
    const r = await cli('run', 'notools.chain.yaml', '--json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).error).toMatchObject({
      class: 'tier_limit',
      message: expect.stringMatching(/^the standard tier needs at least 1 model step\(s\) granted a tool, found 0/),
      file: 'notools.chain.yaml',
    });
    writeFileSync(
      join(project.dir, 'bad.chain.yaml'),
      'chain: "a > > b"\ntasks:\n  a: { kind: model, prompt: hi }\n  b: { kind: model, prompt: hi }\n',
    );
    const bad = await cli('run', 'bad.chain.yaml', '--json');
    expect([bad.code, JSON.parse(bad.out).error.file]).toEqual([1, 'bad.chain.yaml']);
    // Before: the stack was opened first, and made .stepforge/ (its store and engine folders).
    expect(existsSync(join(project.dir, '.stepforge'))).toBe(false);
  });

  it('in a project whose stack has opened before: the same error, the stack opened meanwhile closed again', async () => {
    // A run first, so that .stepforge/ is there: the next run opens the stack while it compiles.
    writeFileSync(
      join(project.dir, 'good.chain.yaml'),
      'chain: "a@web-search > b"\ntasks:\n  a: { kind: model, prompt: hi }\n  b: { kind: model, prompt: there }\n',
    );
    const first = await cli('run', 'good.chain.yaml', '--json');
    expect([first.code, JSON.parse(first.out).status]).toEqual([0, 'SUCCEEDED']);
    const bad = await cli('run', 'bad.chain.yaml', '--json');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out).error).toMatchObject({ file: 'bad.chain.yaml', line: 1 });
    expect(bad.err).toBe('');
    // Closed before the error was returned: no claim or stack record left for the next command to find.
    expect(existsSync(join(project.dir, '.stepforge', 'stack.json'))).toBe(false);
    expect(existsSync(join(project.dir, '.stepforge', 'stack.lock'))).toBe(false);
    const again = await cli('run', 'good.chain.yaml', '--json');
    expect([again.code, JSON.parse(again.out).status]).toEqual([0, 'SUCCEEDED']);
  });
});
