import { describe, it, expect, beforeAll, afterAll, vi } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalProvider } from '@stepforge/runtime';
import { ListExecutionsCommand } from '@aws-sdk/client-sfn';
import { main } from '@stepforge/cli';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../../packages/embedded/src/RunService.js';
import { bufferIo, example, tempProject } from './support/testIo.js';
import { handlerProbe } from './support/countingHandlers.js';

const QUICKSTART = example('quickstart.chain.yaml');
const INPUT = '{"topic":"tide pools"}';

describe('Embedded stack: idempotency and forks', () => {
  const project = tempProject();
  const probe = handlerProbe();
  // Model calls per step: the work a step body does (a reused step returns its committed result
  // from inside the handler without calling the model).
  const modelCalls = new Map<string, number>();
  const converse = LocalProvider.prototype.converse;
  vi.spyOn(LocalProvider.prototype, 'converse').mockImplementation(function (this: LocalProvider, req) {
    modelCalls.set(req.stepId ?? '?', (modelCalls.get(req.stepId ?? '?') ?? 0) + 1);
    return converse.call(this, req);
  });
  const modelCallsNow = () => {
    const o = Object.fromEntries(modelCalls);
    modelCalls.clear();
    return o;
  };
  let stack: EmbeddedStack;
  let service: EmbeddedRunService;
  beforeAll(async () => {
    stack = await openStack({
      projectDir: project.dir,
      inMemory: true,
      env: { STEPFORGE_LOG_LEVEL: 'SILENT' },
      wrapHandlers: (h) => probe.wrap(h),
    });
    service = new EmbeddedRunService(stack, project.dir);
  });
  afterAll(async () => {
    await stack.close();
    project.remove();
  });

  const run = async (...argv: string[]) => {
    const io = bufferIo(project.dir);
    const code = await main(argv, io);
    return { code, io };
  };
  const executions = async () => {
    const entry = (await service.catalog.get('quickstart'))!;
    return (await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: entry.stateMachineArn }))).executions ?? [];
  };

  it('returns the same run for the same idempotency key, without running a handler again', async () => {
    probe.reset();
    const first = await run('run', QUICKSTART, '--input', INPUT, '--idempotency-key', 'same-key', '--json');
    const a = JSON.parse(first.io.stdout());
    expect(a).toMatchObject({ status: 'SUCCEEDED', reused: false });
    const callsAfterFirst = probe.total();
    expect(callsAfterFirst).toBe(4);
    expect(modelCallsNow()).toEqual({ plan: 1, draft: 1, critique: 1, judge: 1 });

    const second = await run('run', QUICKSTART, '--input', INPUT, '--idempotency-key', 'same-key', '--json');
    const b = JSON.parse(second.io.stdout());
    expect(b).toEqual({ runId: a.runId, status: 'SUCCEEDED', output: a.output, reused: true });
    expect(second.code).toBe(0);
    expect(probe.total()).toBe(callsAfterFirst);

    // The progress display says so too.
    const shown = await run('run', QUICKSTART, '--input', INPUT, '--idempotency-key', 'same-key');
    expect(shown.io.stdout()).toContain(`run ${a.runId} (quickstart) reused: idempotency key 'same-key' already ran`);
    expect(shown.io.stdout()).toMatch(/✓ judge\s+reused/);
    expect(shown.io.stdout()).toContain('SUCCEEDED (reused)');
    expect(shown.io.stderr()).toBe('');
    expect(probe.total()).toBe(callsAfterFirst);
    expect(modelCallsNow()).toEqual({});

    // Another input under the same key: the same run, as it ran, and a note that says so.
    const other = await run('run', QUICKSTART, '--input', '{"topic":"something else"}', '--idempotency-key', 'same-key', '--json');
    expect(JSON.parse(other.io.stdout())).toEqual({ runId: a.runId, status: 'SUCCEEDED', output: a.output, reused: true });
    // After the policy in force, which every run states at its start (on stderr with --json).
    expect(other.io.stderr()).toMatch(/^policy: .*\n/);
    expect(other.io.stderr().replace(/^policy: .*\n/, '')).toBe(
      `note: idempotency key 'same-key' was first used with another input; this is that run (${a.runId}), as it ran then\n`,
    );

    // A key names one run: another workflow cannot have it.
    writeFileSync(
      join(project.dir, 'other.chain.yaml'),
      'name: other\nchain: "solo@web-search"\ntasks:\n  solo: { kind: model, prompt: "hi" }\n',
    );
    const conflict = await run('run', 'other.chain.yaml', '--idempotency-key', 'same-key', '--json');
    expect(conflict.code).toBe(1);
    expect(JSON.parse(conflict.io.stdout()).error).toMatchObject({
      class: 'idempotency_key_conflict',
      message: `idempotency key 'same-key' names run ${a.runId} of workflow 'quickstart', not a run of 'other'`,
    });
    expect(probe.total()).toBe(callsAfterFirst);
  });

  it('starts exactly one execution for 20 concurrent starts with one key', async () => {
    probe.reset();
    const before = (await executions()).length;
    const results = await Promise.all(
      Array.from({ length: 20 }, () => run('run', QUICKSTART, '--input', INPUT, '--idempotency-key', 'burst', '--json')),
    );
    const parsed = results.map((r) => JSON.parse(r.io.stdout()) as { runId: string; status: string; reused: boolean });
    expect(new Set(parsed.map((p) => p.runId)).size).toBe(1);
    expect(parsed.filter((p) => !p.reused)).toHaveLength(1);
    expect(parsed.every((p) => p.status === 'SUCCEEDED')).toBe(true);
    expect((await executions()).length).toBe(before + 1);
    expect(probe.total()).toBe(4);
    expect(modelCallsNow()).toEqual({ plan: 1, draft: 1, critique: 1, judge: 1 });
  });

  it('retry re-runs only the steps that did not finish, and records the parent', async () => {
    probe.failing.add('judge');
    modelCallsNow();
    const failed = await run('run', QUICKSTART, '--input', INPUT, '--json');
    probe.failing.clear();
    const parent = JSON.parse(failed.io.stdout());
    expect(parent.status).toBe('FAILED');
    expect(failed.code).toBe(1);
    // judge's handler threw before reaching the model.
    expect(modelCallsNow()).toEqual({ plan: 1, draft: 1, critique: 1 });
    const before = await stack.runtime.runs.getRun(parent.runId);
    // The run record keeps the failed Lambda's message, not its error JSON with the stack trace
    // (the history keeps that, as on AWS).
    expect(before?.error).toEqual({ name: 'ForcedFailure', message: "step 'judge' failed: forced failure of step judge" });

    const retried = await run('runs', 'retry', parent.runId, '--json');
    const fork = JSON.parse(retried.io.stdout());
    expect(fork).toMatchObject({ parentRunId: parent.runId, status: 'SUCCEEDED' });
    expect(fork.runId).not.toBe(parent.runId);
    expect(retried.code).toBe(0);
    // Only the unfinished step did its work again.
    expect(modelCallsNow()).toEqual({ judge: 1 });
    expect((await stack.runtime.runs.getRun(fork.runId))?.parentRunId).toBe(parent.runId);
    const records = await stack.runtime.runs.listSteps(fork.runId);
    expect(records.every((r) => r.status === 'SUCCEEDED')).toBe(true);
    // runs show lists the fork among the run's events: what it carried over and what it re-ran.
    const shown = await run('runs', 'show', fork.runId, '--json');
    expect(JSON.parse(shown.io.stdout()).events).toEqual([
      expect.objectContaining({ type: 'fork', stepId: null, detail: expect.objectContaining({ parentRunId: parent.runId, rerun: [] }) }),
    ]);
    // The parent run is untouched.
    expect(await stack.runtime.runs.getRun(parent.runId)).toEqual(before);
  });

  it('restart --from re-runs exactly the step and its downstream', async () => {
    const base = JSON.parse((await run('run', QUICKSTART, '--input', INPUT, '--json')).io.stdout());
    expect(base.status).toBe('SUCCEEDED');
    expect(modelCallsNow()).toEqual({ plan: 1, draft: 1, critique: 1, judge: 1 });
    const restarted = await run('runs', 'restart', base.runId, '--from', 'draft', '--json');
    const fork = JSON.parse(restarted.io.stdout());
    expect(fork).toMatchObject({ parentRunId: base.runId, status: 'SUCCEEDED', output: base.output });
    expect(modelCallsNow()).toEqual({ draft: 1, judge: 1 });

    const fromPlan = JSON.parse((await run('runs', 'restart', base.runId, '--from', 'plan', '--json')).io.stdout());
    expect(fromPlan.status).toBe('SUCCEEDED');
    expect(modelCallsNow()).toEqual({ plan: 1, draft: 1, critique: 1, judge: 1 });
  });
});
