import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '@stepforge/cli';
import { openStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../../packages/embedded/src/RunService.js';
import { bufferIo, tempProject } from './support/testIo.js';

/**
 * A run whose process ends in the middle of a step (as when `stepforge run` is interrupted), on
 * the on-disk stack. The next process to hold the stack resumes the execution and dispatches the
 * step again; the lease the ended process held on it must not make that attempt wait out the
 * lease time (15 minutes), since the process that holds the stack now knows it is the only one.
 * The run then finishes with nobody waiting for it, and the next read of the run settles its record.
 */
const WORKFLOW = `document: { dsl: "1.0", name: inflight }
functions: { work: {} }
input: { topic: string }
steps:
  first: { call: function, function: work, input: { t: "\${ input.topic }" } }
  second: { call: function, function: work, input: { t: "\${ steps.first.output.t }" } }
`;

// The user function counts its calls and, while the test holds the gate, waits on it.
const USER_FUNCTION = `export default async function work(input) {
  const g = globalThis.__sfResumeTest;
  g.calls.push(input.t);
  if (g.gate) await g.gate;
  return { t: input.t, call: g.calls.length };
}
`;

interface Probe {
  calls: string[];
  gate?: Promise<void>;
}

describe('Runs: a step in flight when its process ends', () => {
  const project = tempProject();
  const env = { STEPFORGE_LOG_LEVEL: 'SILENT' };
  const probe: Probe = { calls: [] };
  let release!: () => void;
  let runId: string;
  beforeAll(() => {
    (globalThis as { __sfResumeTest?: Probe }).__sfResumeTest = probe;
    mkdirSync(join(project.dir, 'functions', 'user'), { recursive: true });
    writeFileSync(join(project.dir, 'functions', 'user', 'work.mjs'), USER_FUNCTION);
    writeFileSync(join(project.dir, 'inflight.yaml'), WORKFLOW);
  });
  afterAll(() => {
    release?.();
    project.remove();
  });

  it('runs the step again in the next process instead of failing it with StepInProgress', async () => {
    probe.gate = new Promise<void>((r) => {
      release = r;
    });
    const first = await openStack({ projectDir: project.dir, env });
    try {
      const service = new EmbeddedRunService(first, project.dir);
      const { entry } = await service.catalog.registerFile('inflight.yaml');
      runId = (await service.start(entry, { topic: 'tides' })).run.runId;
      for (let i = 0; i < 400 && probe.calls.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(probe.calls).toEqual(['tides']);
      const [step] = await first.runtime.runs.listSteps(runId);
      expect(step).toMatchObject({ stepId: 'first', status: 'RUNNING' });
    } finally {
      await first.close();
    }
    // The first attempt's body is still waiting in this process: the gate stays shut until the
    // second attempt is done, so its late commit finds its lease taken (and changes nothing).
    const gate = probe.gate;
    delete probe.gate;

    const second = await openStack({ projectDir: project.dir, env });
    try {
      let execution;
      for (let i = 0; i < 400; i++) {
        execution = await new EmbeddedRunService(second, project.dir).describeExecution(
          `arn:aws:states:us-east-1:123456789012:execution:inflight:${runId}`,
        );
        if (execution?.status !== 'RUNNING') break;
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(execution?.status).toBe('SUCCEEDED');
      expect(JSON.parse(execution!.output!)).toEqual({ t: 'tides', call: 3 });
      expect(probe.calls).toEqual(['tides', 'tides', 'tides']);
      // Nobody in this process waited for the run, so its record still says RUNNING.
      expect((await second.runtime.runs.getRun(runId))?.status).toBe('RUNNING');
    } finally {
      await second.close();
    }
    release();
    await gate;
  });

  it('settles the run record on the next read, with the time the execution ended', async () => {
    const io = bufferIo(project.dir);
    expect(await main(['runs', 'list', '--json'], io)).toBe(0);
    const [run] = JSON.parse(io.stdout()).runs as { runId: string; status: string; endedAt: string }[];
    expect(run).toMatchObject({ runId, status: 'SUCCEEDED' });
    const shown = bufferIo(project.dir);
    expect(await main(['runs', 'show', runId, '--json'], shown)).toBe(0);
    const details = JSON.parse(shown.stdout()) as {
      run: { status: string; endedAt: string; output: unknown };
      steps: { id: string; status: string; records: { attempts: number }[] }[];
    };
    expect(details.run).toMatchObject({ status: 'SUCCEEDED', output: { t: 'tides', call: 3 } });
    expect(Date.now() - Date.parse(details.run.endedAt)).toBeGreaterThan(0);
    expect(details.run.endedAt).toBe(run!.endedAt);
    // The first step's record counts both attempts.
    expect(details.steps.map((s) => [s.id, s.status, s.records.map((r) => r.attempts)])).toEqual([
      ['first', 'succeeded', [2]],
      ['second', 'succeeded', [1]],
    ]);
  });
});
