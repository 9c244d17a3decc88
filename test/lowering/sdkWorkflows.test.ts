// The agent SDK's workflow, parallel and stateGraph, compiled through the IR and run on the embedded
// engine. Function Tasks call the user's functions as the function handler does (codeFunction);
// agents answer `<name><input>` unless a test scripts them.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { agent, agentNode, codeToIr, compileIr, END, parallel, stateGraph, workflow, type CodeWorkflowValue } from '@stepforge/compiler';
import type { StepEnvelope } from '@stepforge/contract';
import { codeFunction } from '../../packages/runtime/src/steps/codeNodeStep.js';
import { defaultAnswer, runScripted, type Script } from './scriptedRuntime.js';

const aslValidator = createRequire(import.meta.url)('asl-validator') as (d: unknown) => {
  isValid: boolean;
  errorsText(sep?: string): string;
};
const named = (name: string, message = 'boom') => Object.assign(new Error(message), { name });

function compile(value: CodeWorkflowValue, options: { maxIterations?: number; start?: string } = {}) {
  return compileIr(codeToIr(value, { module: '/project/flow.ts', exportName: 'flow', file: 'flow.ts', ...options }));
}

/** Every step's script: agents by name (default `<name><input>`), functions through codeFunction. */
function scripts(value: CodeWorkflowValue, agents: Record<string, Script> = {}): Record<string, Script> {
  // Synchronous where the harness answers through a task token (tool calls), which does not await.
  const script: Script = (env: StepEnvelope, n: number) => {
    const node = env.config.codeNode as string | undefined;
    // An agent granted tools runs as an agent loop: its turns and tool calls get the default answers.
    if (env.step.role === 'reason' || env.toolCall) return defaultAnswer(env);
    if (env.step.role === 'agent') {
      const name = env.step.id.slice('flow.'.length);
      return agents[name]
        ? agents[name]!(env, n)
        : { output: `${name}<${typeof env.inputs.value === 'string' ? env.inputs.value : JSON.stringify(env.inputs.value)}>` };
    }
    const call = codeFunction(value, node!, env.config);
    if (!call) throw named('CodeModuleLoadError', `no function for ${node}`);
    return call(env.inputs.value).then((output) => ({ output }));
  };
  return new Proxy({}, { get: () => script });
}

const a = (name: string) => agent({ name, model: 'local:test', instructions: `you are ${name}` });

describe('Function: lowerSdk (ASL)', () => {
  it('emits ASL asl-validator accepts for each shape', () => {
    const shapes: CodeWorkflowValue[] = [
      workflow([
        a('one'),
        { agent: a('two'), when: () => true, transform: String, retries: 1 },
        parallel([a('x'), { agent: a('y'), transform: String }]),
      ]),
      parallel([a('x'), a('y')]),
      stateGraph()
        .addNode('n', () => ({}))
        .addNode(
          'm',
          agentNode(a('w'), String, () => ({})),
        )
        .addEdge('n', 'm')
        .addEdge('m', () => END),
    ];
    for (const shape of shapes) {
      const v = aslValidator(structuredClone(compile(shape).asl));
      expect(v.isValid ? '' : v.errorsText('\n')).toBe('');
    }
  });
});

describe('Function: lowerSdk (workflow)', () => {
  const flow = workflow([
    a('intake'),
    { agent: a('urgent'), when: (prev) => String(prev).includes('pain'), retries: 2, retryDelay: 1500 },
    parallel([a('cardio'), { agent: a('labs'), transform: (s) => `labs for ${String(s)}` }]),
    { agent: a('plan'), transform: (notes) => `notes:\n${String(notes)}` },
  ]);

  it('names the states after the agents, with a Choice on when and Retry from retries', () => {
    const states = compile(flow).asl.States as Record<string, Record<string, unknown>>;
    expect(states.intake!.Type).toBe('Task');
    expect(states['flow: urgent run?']!.Type).toBe('Choice');
    expect((states.urgent!.Retry as unknown[]).at(-1)).toMatchObject({ MaxAttempts: 2, IntervalSeconds: 2, BackoffRate: 1 });
    const group = states['parallel 3']!;
    expect(group.Type).toBe('Parallel');
    // Every branch catches its own failure: one agent failing does not fail the group.
    for (const b of group.Branches as { States: Record<string, { Type: string; Catch?: { Next: string }[] }> }[]) {
      const tasks = Object.values(b.States).filter((s) => s.Type === 'Task');
      expect(tasks.every((t) => t.Catch?.[0]?.Next.endsWith('failed'))).toBe(true);
    }
    expect((states.intake!.Arguments as { config: Record<string, unknown> }).config).toMatchObject({
      agentConfig: { model: 'local:test', instructions: 'you are intake' },
    });
  });

  it('runs when, transform and the group, joining fulfilled outputs with newlines', async () => {
    const run = await runScripted(compile(flow), { input: 'chest pain' }, scripts(flow));
    expect(run.result.status).toBe('SUCCEEDED');
    const out = run.result.output as
      { flow: { output: string; steps: unknown[]; stoppedEarly: boolean } } | { output: string; steps: unknown[]; stoppedEarly: boolean };
    const r = 'flow' in out ? out.flow : out;
    expect(r.output).toBe('plan<notes:\ncardio<urgent<intake<chest pain>>>\nlabs<labs for urgent<intake<chest pain>>>>');
    expect(r.stoppedEarly).toBe(false);
    expect(r.steps.map((s) => (s as { agent?: string; parallel?: string }).agent ?? (s as { parallel: string }).parallel)).toEqual([
      'intake',
      'urgent',
      'parallel 3',
      'plan',
    ]);
  });

  it('skips a step whose when is false and passes the previous response on', async () => {
    const run = await runScripted(compile(flow), { input: 'a cough' }, scripts(flow));
    const r = run.result.output as { output: string; steps: { agent?: string; skipped?: boolean }[] };
    expect(r.steps[1]).toEqual({ agent: 'urgent', skipped: true });
    expect(r.output).toBe('plan<notes:\ncardio<intake<a cough>>\nlabs<labs for intake<a cough>>>');
  });

  it('isolates a failing branch: the group goes on with the others', async () => {
    const run = await runScripted(
      compile(flow),
      { input: 'x' },
      scripts(flow, {
        cardio: () => {
          throw named('ProviderError', 'model down');
        },
      }),
    );
    expect(run.result.status).toBe('SUCCEEDED');
    const r = run.result.output as { output: string; steps: { results?: unknown[] }[] };
    expect(r.steps[2]!.results).toEqual([
      { status: 'rejected', agent: 'cardio', reason: { error: 'ProviderError', cause: 'model down' } },
      { status: 'fulfilled', agent: 'labs', value: 'labs<labs for intake<x>>' },
    ]);
    expect(r.output).toBe('plan<notes:\nlabs<labs for intake<x>>>');
  });

  it('fails the workflow with ParallelAllFailed when every branch fails', async () => {
    const down = () => {
      throw named('ProviderError', 'model down');
    };
    const run = await runScripted(compile(flow), { input: 'x' }, scripts(flow, { cardio: down, labs: down }));
    expect(run.result.status).toBe('FAILED');
    expect(run.result.error).toBe('ParallelAllFailed');
    expect(run.result.cause).toBe("every branch of the parallel group 'parallel 3' failed");
  });
});

describe('Function: lowerSdk (when on a parallel branch)', () => {
  const flow = workflow([
    a('intake'),
    parallel([
      { agent: a('cardio'), when: (prev) => String(prev).includes('chest') },
      { agent: a('labs'), when: (prev) => String(prev).includes('fever'), transform: (s) => `labs for ${String(s)}` },
      {
        agent: a('pharmacy'),
        input: 'the medication list',
        when: (own) => {
          if (own === 'boom') throw new Error('no');
          return true;
        },
      },
    ]),
  ]);

  it('emits ASL asl-validator accepts, the decision a function Task and a Choice inside the branch', () => {
    const c = compile(flow);
    const v = aslValidator(structuredClone(c.asl));
    expect(v.isValid ? '' : v.errorsText('\n')).toBe('');
    const group = (c.asl.States as Record<string, { Branches: { StartAt: string; States: Record<string, { Type: string }> }[] }>)[
      'parallel 2'
    ]!;
    expect(group.Branches.map((b) => b.StartAt)).toEqual(['flow: cardio when?', 'flow: labs when?', 'flow: pharmacy when?']);
    expect(group.Branches[1]!.States['flow: labs run?']!.Type).toBe('Choice');
  });

  it('runs a branch whose when is true and skips one whose when is false: it passes its input on as its value', async () => {
    const run = await runScripted(compile(flow), { input: 'chest pain' }, scripts(flow));
    expect(run.result.status).toBe('SUCCEEDED');
    const r = run.result.output as { output: string; steps: { results?: unknown[] }[] };
    expect(r.steps[1]!.results).toEqual([
      { status: 'fulfilled', agent: 'cardio', value: 'cardio<intake<chest pain>>' },
      { status: 'fulfilled', agent: 'labs', value: 'intake<chest pain>', skipped: true },
      // A branch's own input is what its when sees.
      { status: 'fulfilled', agent: 'pharmacy', value: 'pharmacy<the medication list>' },
    ]);
    expect(r.output).toBe('cardio<intake<chest pain>>\nintake<chest pain>\npharmacy<the medication list>');
    // The skipped branch's agent and transform never ran.
    expect(run.calls.some((x) => x.step.id === 'flow.labs' && x.step.role !== 'when')).toBe(false);
  });

  it('rejects only its branch when a when throws', async () => {
    const g = parallel([
      {
        agent: a('x'),
        when: () => {
          throw new Error('when broke');
        },
      },
      a('y'),
    ]);
    const run = await runScripted(compile(g), { input: 'q' }, scripts(g));
    expect(run.result.status).toBe('SUCCEEDED');
    const r = run.result.output as {
      results: { status: string; agent: string; reason?: { error: string; cause: string } }[];
      fulfilled: number;
      rejected: number;
    };
    // The harness calls the function as is (the function handler would name it NodeError).
    expect(r.results[0]).toEqual({ status: 'rejected', agent: 'x', reason: { error: 'Error', cause: 'when broke' } });
    expect([r.fulfilled, r.rejected]).toEqual([1, 1]);
  });
});

describe('Function: lowerSdk (agents granted tools)', () => {
  const tooled = (name: string) => agent({ name, model: 'local:test', tools: ['web-search'] });

  it('runs a workflow step granted tools as an agent loop named after the agent', async () => {
    const flow = workflow([a('first'), tooled('researcher'), a('last')]);
    const c = compile(flow);
    const states = c.asl.States as Record<string, { Type: string; Arguments?: { tools?: string[]; step?: { role?: string } } }>;
    expect(states.researcher).toMatchObject({ Type: 'Task', Arguments: { tools: ['web-search'], step: { role: 'reason' } } });
    expect(states['researcher: call tools']!.Type).toBe('Map');
    const run = await runScripted(c, { input: 'tides' }, scripts(flow));
    expect(run.result.status).toBe('SUCCEEDED');
    expect((run.result.output as { output: string }).output).toBe('last<flow.researcher:done(web-search:ok)>');
    expect(run.calls.filter((x) => x.toolCall).map((x) => x.toolCall!.tool)).toEqual(['web-search']);
  });

  it('runs an agent node granted tools between its inputFn and mergeFn', async () => {
    const g = stateGraph<{ q: string; a?: string }>()
      .addNode(
        'ask',
        agentNode(
          tooled('asker'),
          (s) => s.q,
          (_s, out) => ({ a: String(out) }),
        ),
      )
      .addEdge('ask', END);
    const run = await runScripted(compile(g), { q: 'why' }, scripts(g));
    expect(run.result.output).toMatchObject({ state: { q: 'why', a: 'flow.ask:done(web-search:ok)' }, iterations: 1, terminatedBy: 'end' });
    const v = aslValidator(structuredClone(compile(g).asl));
    expect(v.isValid ? '' : v.errorsText('\n')).toBe('');
  });
});

describe('Function: lowerSdk (parallel)', () => {
  it('settles every branch: { results, fulfilled, rejected }', async () => {
    const group = parallel([a('one'), { agent: a('two'), input: 'own input' }, a('three')]);
    const run = await runScripted(
      compile(group),
      { input: 'shared' },
      scripts(group, {
        three: () => {
          throw named('ProviderError', 'no');
        },
      }),
    );
    expect(run.result.status).toBe('SUCCEEDED');
    expect(run.result.output).toEqual({
      results: [
        { status: 'fulfilled', agent: 'one', value: 'one<shared>' },
        { status: 'fulfilled', agent: 'two', value: 'two<own input>' },
        { status: 'rejected', agent: 'three', reason: { error: 'ProviderError', cause: 'no' } },
      ],
      fulfilled: 2,
      rejected: 1,
    });
  });
});

interface Review {
  text: string;
  reviews: number;
  approved?: boolean;
  draft?: string;
}

describe('Function: lowerSdk (stateGraph)', () => {
  const graph = (approveAt: number) =>
    stateGraph<Review>()
      .addNode(
        'draft',
        agentNode(
          a('writer'),
          (s) => `write: ${s.text}`,
          (_s, out) => ({ draft: String(out) }),
        ),
      )
      .addNode('review', (s) => ({ reviews: s.reviews + 1, approved: s.reviews + 1 >= approveAt }))
      .addEdge('draft', 'review')
      .addEdge('review', (s) => (s.approved ? END : 'draft'));

  it('loops through the router until END: terminatedBy "end"', async () => {
    const g = graph(2);
    const run = await runScripted(compile(g), { text: 'hi', reviews: 0 }, scripts(g));
    expect(run.result.status).toBe('SUCCEEDED');
    expect(run.result.output).toMatchObject({
      state: { text: 'hi', reviews: 2, approved: true, draft: 'draft<write: hi>' },
      iterations: 4,
      terminatedBy: 'end',
    });
    expect((run.result.output as { steps: { node: string }[] }).steps.map((s) => s.node)).toEqual(['draft', 'review', 'draft', 'review']);
    // The agent node is inputFn (function) → the agent (model) → mergeFn (function).
    expect(run.calls.slice(0, 4).map((c) => `${c.step.kind}:${c.step.role}`)).toEqual([
      'function:input',
      'agent:agent',
      'function:merge',
      'function:node',
    ]);
  });

  it('stops at maxIterations: terminatedBy "maxIterations"', async () => {
    const g = graph(100);
    const run = await runScripted(compile(g, { maxIterations: 5 }), { text: 'hi', reviews: 0 }, scripts(g));
    expect(run.result.status).toBe('SUCCEEDED');
    expect(run.result.output).toMatchObject({ iterations: 5, terminatedBy: 'maxIterations', state: { reviews: 2 } });
  });

  it('bounds cycles at 25 node runs by default', async () => {
    const g = graph(1000);
    const run = await runScripted(compile(g), { text: 'hi', reviews: 0 }, scripts(g));
    expect(run.result.output).toMatchObject({ iterations: 25, terminatedBy: 'maxIterations' });
  });

  it('stops at a node without an edge: terminatedBy "noEdge"', async () => {
    const g = stateGraph<{ n: number }>()
      .addNode('inc', (s) => ({ n: s.n + 1 }))
      .addNode('done', () => ({}))
      .addEdge('inc', 'done');
    const run = await runScripted(compile(g), { n: 1 }, scripts(g));
    expect(run.result.output).toEqual({
      state: { n: 2 },
      steps: [
        { node: 'inc', update: { n: 2 } },
        { node: 'done', update: {} },
      ],
      iterations: 2,
      terminatedBy: 'noEdge',
    });
  });

  it('fails with UnknownNode naming the node when its router returns a name that is no node', async () => {
    const g = stateGraph<{ n: number }>()
      .addNode('pick', () => ({}))
      .addEdge('pick', () => 'nowhere');
    const run = await runScripted(compile(g), { n: 1 }, scripts(g));
    expect(run.result.status).toBe('FAILED');
    expect(run.result.error).toBe('UnknownNode');
    expect(JSON.parse(run.result.cause!.slice(run.result.cause!.indexOf('{'))).errorMessage).toBe(
      `node 'pick': its router returned "nowhere", which is no node of the graph (nodes: pick; or END)`,
    );
  });

  it('refuses an edge to an unknown node and a start that is no node with invalid_workflow', () => {
    const g = stateGraph()
      .addNode('a', () => ({}))
      .addEdge('a', 'b');
    expect(() => compile(g)).toThrow(
      expect.objectContaining({ code: 'invalid_workflow', message: "export 'flow': edges.a: edge to unknown node 'b'" }),
    );
    const h = stateGraph().addNode('a', () => ({}));
    expect(() => compile(h, { start: 'z' })).toThrow(
      expect.objectContaining({ code: 'invalid_workflow', message: "export 'flow': start: the graph starts at unknown node 'z'" }),
    );
  });
});

describe('Function: sdkToIr (refusals)', () => {
  it('refuses tools on a parallel branch with invalid_workflow naming the place', () => {
    expect(() => compile(parallel([agent({ name: 't', tools: ['web-search'] })]))).toThrow(
      expect.objectContaining({
        code: 'invalid_workflow',
        message: expect.stringContaining("export 'flow': (root).steps.0: an agent granted tools in a parallel branch is not supported yet"),
      }),
    );
  });
});
