// Display names end to end: a DSL document named `Triage — EU` compiles to Triage-EU.asl.json, runs as
// the state machine Triage-EU, and is shown as `Triage — EU` where a person reads it (run progress,
// `runs list`, `runs show`, the API's workflow list); `runs list --workflow` takes either name. Two
// files of a project whose names meet in one workflow name are refused by serve (duplicate_workflow).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../../packages/embedded/src/RunService.js';
import { startServe, type ServeHandle } from '../../packages/cli/src/commands/serve.js';
import { bufferIo, cliIn, tempProject } from './support/testIo.js';

const STEPS =
  'agents: { Triage_Agent: {} }\nsteps:\n  greet:\n    call: agent\n    agent: Triage_Agent\n    input_template: "User said: ${ input.message }"\n';
const doc = (name: string) => `document:\n  dsl: "1.0.0"\n  name: ${name}\n  version: "0.1.0"\n${STEPS}`;

describe('CLI: display names (compile, run, runs list/show)', () => {
  const project = tempProject('sf-names-');
  const stepforge = cliIn(project.dir);
  let runId = '';
  beforeAll(() => writeFileSync(join(project.dir, 'triage.yaml'), doc('"Triage — EU"')));
  afterAll(() => project.remove());

  it('writes the compiled files under the workflow name, and names both in --json', async () => {
    const r = await stepforge('compile', 'triage.yaml', '-o', 'out', '--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out) as { name: string; displayName: string; files: string[] };
    expect([out.name, out.displayName]).toEqual(['Triage-EU', 'Triage — EU']);
    expect(out.files).toEqual([join(project.dir, 'out', 'Triage-EU.asl.json'), join(project.dir, 'out', 'Triage-EU.manifest.json')]);
    const asl = JSON.parse(readFileSync(out.files[0]!, 'utf8')) as { Comment: string };
    expect(asl.Comment).toBe('Triage — EU — compiled by Stepforge from triage.yaml');
    expect(JSON.parse(readFileSync(out.files[1]!, 'utf8'))).toMatchObject({ workflow: 'Triage-EU', displayName: 'Triage — EU' });
  });

  it("shows the display name in the run's progress and runs it as the state machine of the workflow name", async () => {
    const r = await stepforge('run', 'triage.yaml', '--input', '{"message":"my parcel is late"}');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const started = /^run ([0-9a-f-]{36}) \(Triage — EU\) started$/m.exec(r.out);
    expect(started, r.out).not.toBeNull();
    runId = started![1]!;
    const shown = JSON.parse((await stepforge('runs', 'show', runId, '--json')).out) as {
      run: { workflow: string; displayName: string; executionArn: string };
    };
    expect(shown.run).toMatchObject({ workflow: 'Triage-EU', displayName: 'Triage — EU' });
    expect(shown.run.executionArn).toMatch(/:execution:Triage-EU:/);
  });

  it('lists the run under its display name, found by either name', async () => {
    const list = await stepforge('runs', 'list');
    expect(list.code).toBe(0);
    const line = list.out.split('\n').find((l) => l.startsWith(runId));
    expect(line).toMatch(new RegExp(`^${runId}  Triage — EU {9}  SUCCEEDED`));
    for (const workflow of ['Triage — EU', 'Triage-EU']) {
      const r = JSON.parse((await stepforge('runs', 'list', '--workflow', workflow, '--json')).out) as {
        runs: { runId: string; workflow: string; displayName: string }[];
      };
      expect(
        r.runs.map((x) => [x.runId, x.workflow, x.displayName]),
        workflow,
      ).toEqual([[runId, 'Triage-EU', 'Triage — EU']]);
    }
    const none = await stepforge('runs', 'list', '--workflow', 'Triage UK');
    expect(none.out).toBe("no runs: no workflow named 'Triage UK' has run here (the workflows here: Triage — EU (Triage-EU))\n");
  });

  it('heads runs show with the display name and the workflow name', async () => {
    const r = await stepforge('runs', 'show', runId);
    expect(r.out.split('\n')[0]).toMatch(new RegExp(`^run ${runId}  Triage — EU \\(Triage-EU\\)  SUCCEEDED  `));
  });
});

describe('CLI: run and compile -o refuse a second document whose name gives the same workflow name', () => {
  const project = tempProject('sf-names-dup-');
  const stepforge = cliIn(project.dir);
  beforeAll(() => {
    writeFileSync(join(project.dir, 'triage.yaml'), doc('"Triage — EU"'));
    writeFileSync(join(project.dir, 'triage-copy.yaml'), doc('Triage EU'));
  });
  afterAll(() => project.remove());
  const refusal =
    "error[duplicate_workflow] triage-copy.yaml:3:9: triage-copy.yaml names its workflow 'Triage EU' (workflow name 'Triage-EU'), which gives the same workflow name as 'Triage — EU' (workflow name 'Triage-EU') of triage.yaml: state machine names must be unique in a project";
  const hint =
    '= help: give one of them another name (document.name), one that differs in letters or digits, not only in spaces, punctuation or accents';

  it('run: runs the first, refuses the second at its document.name naming both files, and runs the first again', async () => {
    const input = ['--input', '{"message":"hi"}'];
    expect((await stepforge('run', 'triage.yaml', ...input)).code).toBe(0);
    const second = await stepforge('run', 'triage-copy.yaml', ...input);
    expect(second.code).toBe(1);
    expect(second.err).toContain(refusal);
    expect(second.err).toContain(hint);
    // Re-running the first, and running it after editing its display name, are never refused.
    expect((await stepforge('run', 'triage.yaml', ...input)).code).toBe(0);
    writeFileSync(join(project.dir, 'triage.yaml'), doc('"Triage – EU"'));
    const edited = await stepforge('run', 'triage.yaml', ...input);
    expect({ code: edited.code, err: edited.err }).toEqual({ code: 0, err: '' });
    writeFileSync(join(project.dir, 'triage.yaml'), doc('"Triage — EU"'));
  });

  it('run: a file renamed away from the workflow name, or deleted, no longer holds the name', async () => {
    const input = ['--input', '{"message":"hi"}'];
    writeFileSync(join(project.dir, 'triage.yaml'), doc('"Triage — UK"'));
    expect((await stepforge('run', 'triage-copy.yaml', ...input)).code).toBe(0);
    writeFileSync(join(project.dir, 'triage.yaml'), doc('"Triage — EU"'));
  });

  it('compile -o: refuses to replace the files another document wrote under the workflow name, and rewrites its own', async () => {
    expect((await stepforge('compile', 'triage.yaml', '-o', 'out')).code).toBe(0);
    expect((await stepforge('compile', 'triage.yaml', '-o', 'out')).code).toBe(0);
    const second = await stepforge('compile', 'triage-copy.yaml', '-o', 'out');
    expect(second.code).toBe(1);
    expect(second.err).toContain(refusal);
    expect(JSON.parse(readFileSync(join(project.dir, 'out', 'Triage-EU.manifest.json'), 'utf8'))).toMatchObject({
      file: 'triage.yaml',
      displayName: 'Triage — EU',
    });
    // Another directory holds no files of the first.
    expect((await stepforge('compile', 'triage-copy.yaml', '-o', 'other')).code).toBe(0);
  });
});

describe('Command: serve (display names and duplicate workflow names)', () => {
  const project = tempProject('sf-names-serve-');
  let stack: EmbeddedStack;
  let handle: ServeHandle;
  const io = bufferIo(project.dir);
  beforeAll(async () => {
    mkdirSync(join(project.dir, 'workflows'));
    mkdirSync(join(project.dir, 'examples'));
    writeFileSync(join(project.dir, 'workflows', 'triage.yaml'), doc('"Triage — EU"'));
    // Another display name, the same workflow name: it would replace the first one's state machine.
    writeFileSync(join(project.dir, 'examples', 'triage-copy.yaml'), doc('Triage EU'));
    writeFileSync(join(project.dir, 'examples', 'analysis.yaml'), doc('Document analysis'));
    stack = await openStack({ projectDir: project.dir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
    handle = await startServe(io, new EmbeddedRunService(stack, project.dir), 0);
  });
  afterAll(async () => {
    await handle.close();
    await stack.close();
    project.remove();
  });

  it('serves the first file and refuses the second with duplicate_workflow, naming both', () => {
    expect(io.stderr()).toBe(
      "warning: examples/triage-copy.yaml not served: error[duplicate_workflow] examples/triage-copy.yaml names its workflow 'Triage EU' (workflow name 'Triage-EU'), which gives the same workflow name as 'Triage — EU' (workflow name 'Triage-EU') of workflows/triage.yaml: state machine names must be unique in a project\n",
    );
    expect(handle.workflows).toEqual(['Triage-EU (Triage — EU)', 'Document-analysis (Document analysis)']);
  });

  it('lists workflows with both names, and starts them by the workflow name', async () => {
    const list = (await (await fetch(`${handle.url}/workflows`, { headers: { authorization: `Bearer ${handle.token}` } })).json()) as {
      workflows: { name: string; displayName: string; file: string }[];
    };
    expect(list.workflows.map((w) => [w.name, w.displayName, w.file])).toEqual([
      ['Document-analysis', 'Document analysis', join('examples', 'analysis.yaml')],
      ['Triage-EU', 'Triage — EU', join('workflows', 'triage.yaml')],
    ]);
    const r = await fetch(`${handle.url}/workflows/Document-analysis/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${handle.token}` },
      body: JSON.stringify({ input: { message: 'hi' }, wait: true }),
    });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { status: string }).status).toBe('SUCCEEDED');
    const runs = (await (
      await fetch(`${handle.url}/workflows/Document-analysis/runs`, { headers: { authorization: `Bearer ${handle.token}` } })
    ).json()) as { runs: { workflow: string; displayName: string }[] };
    expect(runs.runs.map((x) => [x.workflow, x.displayName])).toEqual([['Document-analysis', 'Document analysis']]);
    expect(existsSync(join(project.dir, 'examples', 'analysis.yaml'))).toBe(true);
  });
});
