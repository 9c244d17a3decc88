import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../../packages/embedded/src/RunService.js';
import { cliIn, tempProject } from './support/testIo.js';

// Two versions of one workflow (one name): the second renames step `b` to `c`. The tier policy
// wants an agentic step, hence `a@web-search`.
const doc = (second: string) => `name: versioned
chain: "a@web-search > ${second}"
tasks:
  a: {kind: model, prompt: "first"}
  ${second}: {kind: model, prompt: "then ${second}"}
`;

/**
 * A run is shown, and forked, as the version of its workflow it ran: after the workflow is
 * registered again with other steps (its file edited, or another file with the same name), `runs
 * show` of an earlier run lists that run's own steps, and `runs retry` / `restart` refuse by name
 * (`workflow_changed`) rather than run the other workflow under the run's name, starting nothing.
 */
describe('Embedded stack: a run keeps the version of the workflow it ran', () => {
  const project = tempProject();
  let stack: EmbeddedStack;
  let service: EmbeddedRunService;
  beforeAll(async () => {
    stack = await openStack({ projectDir: project.dir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
    service = new EmbeddedRunService(stack, project.dir);
  });
  afterAll(async () => {
    await stack.close();
    project.remove();
  });
  const cli = cliIn(project.dir);
  const runOf = async (text: string, file: string) => {
    const { entry } = await service.catalog.registerText(text, file);
    const { run } = await service.start(entry, {});
    expect((await service.wait(run.runId)).status).toBe('SUCCEEDED');
    return { entry, runId: run.runId };
  };

  it('shows an earlier run with its own steps, and refuses to fork it until its version is registered again', async () => {
    const first = await runOf(doc('b'), 'one.chain.yaml');
    const second = await runOf(doc('c'), 'two.chain.yaml');
    expect(second.entry.version).not.toBe(first.entry.version);
    expect((await stack.runtime.runs.getRun(first.runId))?.workflowVersion).toBe(first.entry.version);

    const shown = JSON.parse((await cli('runs', 'show', first.runId, '--json')).out) as { steps: { id: string; status: string }[] };
    expect(shown.steps.map((s) => [s.id, s.status])).toEqual([
      ['a', 'succeeded'],
      ['b', 'succeeded'],
    ]);
    const shownNow = JSON.parse((await cli('runs', 'show', second.runId, '--json')).out) as { steps: { id: string }[] };
    expect(shownNow.steps.map((s) => s.id)).toEqual(['a', 'c']);

    const runsBefore = (await stack.runtime.runs.listRuns()).length;
    for (const argv of [
      ['runs', 'retry', first.runId],
      ['runs', 'restart', first.runId, '--from', 'b'],
    ]) {
      const r = await cli(...argv, '--json');
      expect(r.code).toBe(1);
      const error = (JSON.parse(r.out) as { error: { class: string; message: string } }).error;
      expect(error.class).toBe('workflow_changed');
      expect(error.message).toMatch(
        new RegExp(
          `^run '${first.runId}' ran another version of workflow 'versioned' \\(from one\\.chain\\.yaml\\) than the one registered now \\(from two\\.chain\\.yaml\\) at \\S+; (retry|restart) runs the workflow as registered now, so it cannot re-run that run's steps$`,
        ),
      );
    }
    const text = await cli('runs', 'retry', first.runId);
    expect(text.err).toContain('error[workflow_changed]');
    expect(text.err).toContain('= help: to retry it, bring back the workflow as the run ran it');
    expect(await stack.runtime.runs.listRuns()).toHaveLength(runsBefore);

    // The version the run ran, registered again: the fork runs it, reusing what finished.
    const again = await service.catalog.registerText(doc('b'), 'one.chain.yaml');
    expect(again.entry.version).toBe(first.entry.version);
    const fork = await service.restart(first.runId, 'b');
    expect(fork.rerun).toEqual(['b']);
    const forked = await service.wait(fork.run.runId);
    expect(forked.status).toBe('SUCCEEDED');
    expect((await service.details(fork.run.runId)).steps.map((s) => [s.id, s.reused])).toEqual([
      ['a', true],
      ['b', false],
    ]);
  });
});
