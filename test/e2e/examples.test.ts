import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { main } from '@stepforge/cli';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../../packages/embedded/src/RunService.js';
import { join } from 'node:path';
import { bufferIo, example, REPO, tempProject } from './support/testIo.js';
import { handlerProbe } from './support/countingHandlers.js';

interface Case {
  readonly file: string;
  readonly input: Record<string, unknown>;
  /** Steps that must have run (have SUCCEEDED step records in DynamoDB). */
  readonly lambdaSteps: readonly string[];
  readonly check: (output: unknown) => void;
  readonly env?: Record<string, string>;
}

const echo = (text: string) => `[offline:echo] ${text}`;

const CASES: readonly Case[] = [
  {
    file: 'quickstart.chain.yaml',
    input: { topic: 'tide pools' },
    lambdaSteps: ['plan', 'draft', 'critique', 'judge'],
    check: (o) => {
      expect(typeof o).toBe('string');
      expect(o as string).toMatch(
        /^\[offline:echo\] Revise the draft using the critique\. Draft: \[offline:echo\] Write a draft about tide pools/,
      );
    },
  },
  {
    file: 'research-swarm.chain.yaml',
    input: { task: 'tides' },
    lambdaSteps: ['agent_1', 'agent_2', 'agent_3', 'gather'],
    check: (o) => {
      expect(o as string).toContain('agent_2: [offline:echo] You are agent 2 of 3 in a swarm. Work independently on: tides');
    },
  },
  {
    file: 'supervisor.chain.yaml',
    input: { task: 'tides' },
    lambdaSteps: ['planner', 'worker_1', 'worker_2', 'worker_3', 'integrate'],
    check: (o) => expect(o as string).toMatch(/^\[offline:echo\] Integrate the workers' results/),
  },
  {
    file: 'consensus-majority.chain.yaml',
    input: { task: 'capital of France?' },
    lambdaSteps: ['voter_1', 'voter_2', 'voter_3'],
    check: (o) => expect(o).toBe(echo('Answer independently and concisely: capital of France?')),
  },
  {
    file: 'review-loop.chain.yaml',
    input: { task: 'a haiku' },
    lambdaSteps: ['worker', 'review_1', 'revise_1', 'review_2', 'revise_2'],
    check: (o) => expect(o as string).toMatch(/^\[offline:echo\] Revise the version below/),
  },
  {
    file: 'customer-support.yaml',
    input: { message: 'I was charged twice' },
    lambdaSteps: ['route', 'reply'],
    check: (o) => {
      const out = o as { reply: string; handled_by: string };
      expect(Object.keys(out).sort()).toEqual(['handled_by', 'reply']);
      expect(out.handled_by).toContain('a customer writes: I was charged twice');
      expect(out.reply).toMatch(/^\[offline:echo\] Write a short, kind reply to a customer/);
    },
  },
  {
    file: 'file-review.yaml',
    input: { files: ['src/a.ts', 'src/b.ts', 'src/c.ts'] },
    lambdaSteps: ['review', 'summary'],
    check: (o) => {
      const out = o as { reviews: string[]; summary: string };
      // One review per file, in item order (Map with MaxConcurrency 10).
      expect(out.reviews).toEqual(
        ['src/a.ts', 'src/b.ts', 'src/c.ts'].map((f) => echo(`Review the file ${f} for bugs and style problems.`)),
      );
      expect(out.summary).toMatch(/^\[offline:echo\] Summarise these reviews/);
    },
  },
  {
    file: 'judge-loop.yaml',
    input: { subject: 'tide pools' },
    lambdaSteps: ['haiku'],
    check: (o) => expect(JSON.stringify(o)).toContain('A haiku about tide pools'),
  },
  {
    file: 'while-loop.yaml',
    input: { question: 'Why is the sky blue?' },
    lambdaSteps: ['improve', 'final'],
    check: (o) =>
      expect(o).toMatch(
        /^\[offline:echo\] State the final answer to 'Why is the sky blue\?' in one sentence\. Notes: \[offline:echo\] Round \d: improve/,
      ),
  },
];

describe('Examples: every example runs offline on the embedded stack', () => {
  const project = tempProject();
  const probe = handlerProbe();
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

  for (const c of CASES) {
    it(`runs ${c.file}: status, output, step records and history`, async () => {
      probe.reset();
      const io = bufferIo(project.dir);
      const code = await main(['run', example(c.file), '--input', JSON.stringify(c.input), '--json'], io);
      // Only the policy in force (on stderr, so stdout stays one JSON value): the examples' own, then the project's.
      expect(io.stderr()).toBe(`policy: ${example('policy.json')} (1 rule), then ${join(REPO, 'workflows', 'policy.json')} (1 rule)\n`);
      const result = JSON.parse(io.stdout()) as { runId: string; status: string; output: unknown; reused: boolean };
      expect(Object.keys(result)).toEqual(['runId', 'status', 'output', 'reused']);
      expect(result.status).toBe('SUCCEEDED');
      expect(code).toBe(0);
      expect(result.reused).toBe(false);
      c.check(result.output);

      // The run record and the step records in DynamoDB.
      const run = await stack.runtime.runs.getRun(result.runId);
      expect(run?.status).toBe('SUCCEEDED');
      expect(run?.output).toEqual(result.output);
      const records = await stack.runtime.runs.listSteps(result.runId);
      const base = (id: string) => /^[^[:#]+/.exec(id)![0];
      for (const step of c.lambdaSteps) {
        const mine = records.filter((r) => base(r.stepId) === step);
        expect(mine.length, `step records of ${step}`).toBeGreaterThan(0);
        expect(mine.every((r) => r.status === 'SUCCEEDED')).toBe(true);
      }
      // Every handler call is one of the expected steps.
      expect([...probe.calls.keys()].sort()).toEqual([...c.lambdaSteps].sort());

      // The history: started, one TaskSucceeded (tool calls, lambda:invoke) or LambdaFunctionSucceeded (plain steps,
      // function-ARN Tasks) per handler call, succeeded with the output.
      const details = await service.details(result.runId);
      const types = details.history.map((e) => e.type);
      expect(types[0]).toBe('ExecutionStarted');
      expect(types.at(-1)).toBe('ExecutionSucceeded');
      expect(types.filter((t) => t === 'TaskSucceeded' || t === 'LambdaFunctionSucceeded').length).toBe(probe.total());
      expect(JSON.parse(details.history.at(-1)!.executionSucceededEventDetails!.output!)).toEqual(result.output);
      expect(details.steps.filter((s) => c.lambdaSteps.includes(s.id)).every((s) => s.state === 'succeeded')).toBe(true);
      if (c.file === 'file-review.yaml')
        expect(records.map((r) => r.stepId).sort()).toEqual(['review[0]', 'review[1]', 'review[2]', 'summary']);
      if (c.file === 'while-loop.yaml') {
        // One record per iteration, numbered from 0; the final step quotes the last round.
        const rounds = records
          .filter((r) => r.stepId.startsWith('improve['))
          .map((r) => Number(/\[(\d+)\]/.exec(r.stepId)![1]))
          .sort();
        expect(rounds.length).toBe(3); // rounds defaults to 3: `iteration < rounds` runs three
        expect(rounds).toEqual(rounds.map((_, i) => i));
        expect(result.output as string).toContain(`Round ${rounds.at(-1)}: improve`);
      }
    });
  }
});

describe('Example: consensus-judge (scripted local provider)', () => {
  it('selects a candidate verbatim', async () => {
    const project = tempProject();
    const env = { STEPFORGE_LOG_LEVEL: 'SILENT', STEPFORGE_LOCAL_SCRIPT: example('consensus-judge.local-script.json') };
    const stack = await openStack({ projectDir: project.dir, inMemory: true, env });
    try {
      const io = bufferIo(project.dir, env);
      const code = await main(['run', example('consensus-judge.chain.yaml'), '--input', '{"task":"capital of France?"}', '--json'], io);
      const result = JSON.parse(io.stdout()) as { runId: string; status: string; output: unknown };
      expect(result).toMatchObject({ status: 'SUCCEEDED', output: '[offline:script] Paris' });
      expect(code).toBe(0);
      const records = await stack.runtime.runs.listSteps(result.runId);
      expect(records.map((r) => /^[^[:#]+/.exec(r.stepId)![0]).sort()).toEqual(
        expect.arrayContaining(['judge', 'voter_1', 'voter_2', 'voter_3']),
      );
    } finally {
      await stack.close();
      project.remove();
    }
  });
});
