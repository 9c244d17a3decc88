import { describe, expect, it } from 'vitest';
import { compileDocument, compileIr, type IrDocument, type StepforgeError } from '@stepforge/compiler';
import { defaultAnswer, runScripted } from './scriptedRuntime.js';
import { compileCase } from '../../packages/compiler/test/golden/goldenCases.js';

const named = (name: string, message = 'boom') => Object.assign(new Error(message), { name });

describe('Function: lowerWorkflow (run on the embedded engine)', () => {
  it('ends the run failed with BudgetExceeded when an agent keeps asking for tools', async () => {
    const run = await runScripted(
      compileCase('c12-budget.chain.yaml'),
      {},
      {
        researcher: (env) =>
          env.toolCall ? defaultAnswer(env) : { done: false, toolCalls: [{ id: `t${env.turn!.index}`, tool: 'search', args: {} }] },
      },
    );
    expect(run.result.status).toBe('FAILED');
    expect(run.result.error).toBe('BudgetExceeded');
    expect(run.result.cause).toContain("step 'researcher' exceeded its budget of 2 turns / 3 tool calls");
    expect(run.calls.filter((c) => c.step.role === 'reason').map((c) => c.budget?.turnsUsed)).toEqual([0, 1]);
  });

  it("ends the run failed with the failing step's error name and names the step in the cause", async () => {
    const run = await runScripted(
      compileCase('d17-sequence.yaml'),
      {},
      {
        second: () => {
          throw named('ShoutFailed', 'the function refused');
        },
      },
    );
    expect(run.result.status).toBe('FAILED');
    expect(run.result.error).toBe('ShoutFailed');
    expect(run.result.cause).toMatch(/^step 'second' failed: .*the function refused/);
    expect(run.calls.map((c) => c.step.id)).toEqual(['first', 'second']);
  });

  it('fails inside a Parallel branch with the same error and step name', async () => {
    const run = await runScripted(
      compileCase('d18-parallel-roots.yaml'),
      {},
      {
        two: () => {
          throw named('ModelThrottled');
        },
      },
    );
    expect(run.result.error).toBe('ModelThrottled');
    expect(run.result.cause).toContain("step 'two' failed");
  });

  it('retries transient Lambda errors with the default retrier', async () => {
    const run = await runScripted(
      compileCase('d16-minimal.yaml'),
      { topic: 'x' },
      {
        write: (env, n) => {
          if (n < 2) throw named('Lambda.TooManyRequestsException', 'slow down');
          return defaultAnswer(env);
        },
      },
    );
    expect(run.result.status).toBe('SUCCEEDED');
    expect(run.result.output).toBe('write<Write about x>');
    expect(run.calls).toHaveLength(3);
    // Each call says which try of its state it is (the handlers' late claim needs a first one).
    expect(run.calls.map((c) => c.attempt)).toEqual([0, 1, 2]);
  });

  it('applies a per-step retry policy only up to max_attempts', async () => {
    const run = await runScripted(
      compileCase('d33-after-when-retry.yaml'),
      { go: true },
      {
        act: () => {
          throw named('Flaky');
        },
      },
    );
    expect(run.result.error).toBe('Flaky');
    expect(run.calls.filter((c) => c.step.id === 'act')).toHaveLength(3);
  });

  it('skips a step whose when guard is false and stores null for it', async () => {
    const run = await runScripted(compileCase('d19-when.yaml'), { severity: 1 });
    expect(run.result.output).toEqual({ urgent: false, paged: null, summary: 'summary<summarise>' });
    expect(run.calls.map((c) => c.step.id)).toEqual(['summary']);
  });

  it('skips a guarded step at the end of a sequence (input go=false)', async () => {
    const run = await runScripted(compileCase('d33-after-when-retry.yaml'), { go: false });
    expect(run.result.status).toBe('SUCCEEDED');
    expect(run.result.output).toBeNull();
  });

  it('rejects a consensus judge that answers something other than a candidate', async () => {
    const run = await runScripted(
      compileCase('c08-consensus-judge.chain.yaml'),
      { task: '2+2' },
      {
        judge: () => ({ output: 'a paraphrase of voter 2' }),
      },
    );
    expect(run.result.status).toBe('FAILED');
    expect(run.result.error).toBe('JudgeChoiceNotCandidate');
    // The cause is the Lambda error as Step Functions reports it: JSON with the handler's message.
    expect(JSON.parse(run.result.cause!.replace("step 'judge' failed: ", ''))).toMatchObject({
      errorType: 'JudgeChoiceNotCandidate',
      errorMessage: `step 'judge' must answer with one of the candidates (voter_1, voter_2, voter_3) verbatim, but answered "a paraphrase of voter 2"; tell the judge to repeat one candidate exactly, without edits or commentary`,
    });
    // The candidates travel to the judge's handler, resolved in ASL from the voters' branch outputs.
    const judge = run.calls.find((c) => c.step.id === 'judge')!;
    expect(judge.inputs.candidates).toEqual(Object.fromEntries(['voter_1', 'voter_2', 'voter_3'].map((v) => [v, `${v}:done(search:ok)`])));
  });

  it('checks a judge marked select: verbatim whatever its prompt says', async () => {
    const text = [
      'chain: "[a@search & b@search] > pick"',
      'tasks:',
      '  a: { kind: model, prompt: "one" }',
      '  b: { kind: model, prompt: "two" }',
      '  pick: { kind: model, prompt: "Choose the better answer: ${steps.a.output} or ${steps.b.output}", select: verbatim }',
    ].join('\n');
    const compiled = compileDocument(text, { file: 'pick.chain.yaml' });
    const bad = await runScripted(compiled, {}, { pick: () => ({ output: 'neither' }) });
    expect(bad.result.error).toBe('JudgeChoiceNotCandidate');
    expect(JSON.parse(bad.result.cause!.replace("step 'pick' failed: ", ''))).toMatchObject({
      errorMessage: expect.stringMatching(/^step 'pick' must answer with one of the candidates \(a, b\) verbatim, but answered "neither"/),
    });
    const good = await runScripted(compiled, {}, { pick: () => ({ output: 'b:done(search:ok)' }) });
    expect(good.result.status).toBe('SUCCEEDED');
    expect(good.result.output).toBe('b:done(search:ok)');
  });

  it('does not check a gather step whose prompt says "verbatim" without select', async () => {
    const text = [
      'chain: "[a@search & b@search] > gather"',
      'tasks:',
      '  a: { kind: model, prompt: "one" }',
      '  b: { kind: model, prompt: "two" }',
      '  gather: { kind: model, prompt: "Quote the key sentences verbatim, then merge: ${steps.a.output} / ${steps.b.output}" }',
    ].join('\n');
    const run = await runScripted(
      compileDocument(text, { file: 'gather.chain.yaml' }),
      {},
      { gather: () => ({ output: 'a merged summary' }) },
    );
    expect(run.result.error).toBeUndefined();
    expect(run.result.output).toBe('a merged summary');
    expect(run.calls.find((c) => c.step.id === 'gather')!.inputs.candidates).toBeUndefined();
  });

  it('rejects select: verbatim on a task without parents, at the field', () => {
    const text = [
      'chain: "a@search & pick"',
      'tasks:',
      '  a: { kind: model, prompt: "one" }',
      '  pick: { kind: model, prompt: "p", select: verbatim }',
    ].join('\n');
    expect(() => compileDocument(text, { file: 'one.chain.yaml' })).toThrowError(
      expect.objectContaining({
        code: 'invalid_task',
        message: `tasks.pick.select: verbatim makes 'pick' answer with one of its parents' outputs, but it has none; put it after the candidates (e.g. "[a & b] > pick"), or remove select`,
        location: expect.objectContaining({ file: 'one.chain.yaml', line: 4, column: 45 }),
      }),
    );
    const other = text.replace('select: verbatim', 'select: best');
    expect(() => compileDocument(other, { file: 'one.chain.yaml' })).toThrowError(
      expect.objectContaining({
        code: 'invalid_task',
        message: 'tasks.pick.select: expected one of "verbatim", got "best"',
        location: expect.objectContaining({ line: 4, column: 45, length: 4 }),
      }),
    );
  });

  it('runs a while body at least once even when the condition is false at once', async () => {
    const run = await runScripted(compileCase('d22-while.yaml'), {}, { check: () => ({ output: { status: 'ready' } }) });
    expect(run.result.output).toEqual({ status: 'ready' });
    expect(run.calls).toHaveLength(1);
  });

  it('stops a while loop at max_iterations', async () => {
    const run = await runScripted(compileCase('d22-while.yaml'), {}, { check: () => ({ output: { status: 'pending' } }) });
    expect(run.result.status).toBe('SUCCEEDED');
    expect(run.calls.map((c) => c.step.iteration)).toEqual([[0], [1], [2], [3], [4]]);
  });

  it('counts a while loop in its condition as the iterations run so far: `iteration < 3` runs three', async () => {
    const text = [
      'document: { dsl: "1.0", name: rounds }',
      'functions: { step: {} }',
      'input: { rounds: { type: integer, default: 3 } }',
      'steps:',
      '  loop:',
      '    call: while',
      '    condition: ${ input.iteration < input.rounds }',
      '    max_iterations: 10',
      '    do:',
      '      round: { call: function, function: step, input: { n: "${ input.iteration }" } }',
    ].join('\n');
    const compiled = compileDocument(text, { file: 'rounds.yaml' });
    for (const [rounds, seen] of [
      [3, [0, 1, 2]],
      [1, [0]],
      [0, [0]],
      [20, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]],
    ] as const) {
      const run = await runScripted(compiled, { rounds }, { round: (env) => ({ output: env.inputs.value }) });
      expect(run.result.status).toBe('SUCCEEDED');
      // The body sees its own index; the first iteration always runs; max_iterations bounds it.
      expect(run.calls.map((c) => (c.inputs.value as { n: number }).n)).toEqual(seen);
      expect(run.calls.map((c) => c.step.iteration)).toEqual(seen.map((i) => [i]));
    }
  });

  it('stops a judge loop at max_iterations with the last candidate', async () => {
    const run = await runScripted(
      compileCase('d25-judge-loop.yaml'),
      {},
      {
        poem: (env) => (env.step.role === 'evaluator' ? { output: { score: 1 } } : { output: `draft ${env.step.iteration.at(-1)}` }),
      },
    );
    expect(run.result.output).toBe('draft 3');
    expect(run.calls.filter((c) => c.step.role === 'generator')).toHaveLength(4);
  });

  it('stops a judge loop written with worker_agent / judge_agent when the judge answers PASS', async () => {
    const run = await runScripted(
      compileCase('d34-graphn-judge-worker.yaml'),
      { product: 'kettle' },
      {
        quality_check: (env) => {
          const round = env.step.iteration.at(-1);
          if (env.step.role === 'evaluator') return { output: round === 1 ? 'PASS' : 'shorter, please' };
          return { output: `copy ${round}` };
        },
      },
    );
    expect(run.result.output).toEqual({ result: 'copy 1' });
    expect(run.calls.map((c) => [c.step.role, c.config.agent])).toEqual([
      ['generator', 'Writer'],
      ['evaluator', 'Editor'],
      ['generator', 'Writer'],
      ['evaluator', 'Editor'],
    ]);
  });

  it('heads each analysis of a parallel_analyzer written with agents / aggregator_agent by its agent', async () => {
    const run = await runScripted(
      compileCase('d35-graphn-analyzer-agents.yaml'),
      { pr_diff: 'diff' },
      {
        multi_review: (env) => ({
          output:
            env.step.role === 'aggregator'
              ? (env.inputs.value as { analyses: string }).analyses
              : `${String(env.config.agent)} found nothing`,
        }),
      },
    );
    expect(run.result.output).toEqual({
      result: '## SecurityReviewer\nSecurityReviewer found nothing\n\n## PerfReviewer\nPerfReviewer found nothing',
    });
    expect(run.calls.find((c) => c.step.role === 'aggregator')!.config.agent).toBe('Synthesizer');
    // Each analyst is sent its own focus.
    expect(run.calls.filter((c) => c.step.role !== 'aggregator').map((c) => [c.config.agent, c.config.focus])).toEqual([
      ['SecurityReviewer', 'security vulnerabilities'],
      ['PerfReviewer', 'performance issues'],
    ]);
  });

  it('routes a handoff to nobody when the entry agent does not hand off', async () => {
    const run = await runScripted(
      compileCase('d24-handoff.yaml'),
      { message: 'hi' },
      {
        route: (env) => (env.step.role === 'entry' ? { output: 'answered directly' } : defaultAnswer(env)),
      },
    );
    expect(run.result.output).toBe('answered directly');
    expect(run.calls.map((c) => c.step.role)).toEqual(['entry']);
  });

  it('bounds hand-offs between specialists', async () => {
    const run = await runScripted(
      compileCase('d24-handoff.yaml'),
      { message: 'hi' },
      {
        route: (env) => ({ output: { handoff: env.step.role === 'billing' ? 'tech' : 'billing' } }),
      },
    );
    expect(run.result.status).toBe('SUCCEEDED');
    expect(run.calls.map((c) => c.step.role)).toEqual(['entry', 'billing', 'tech', 'billing']);
  });

  it('passes large outputs by reference as {"$ref": …}', async () => {
    const ref = { ref: 'runs/run-1/first', bytes: 900_000, sha256: 'c'.repeat(64) };
    // As the runtime answers: `output` is the reference, `outputRef` repeats it.
    const run = await runScripted(compileCase('d17-sequence.yaml'), {}, { first: () => ({ output: { $ref: ref }, outputRef: ref }) });
    const second = run.calls.find((c) => c.step.id === 'second')!;
    // The whole-expression template keeps the reference as it is, for the handler to resolve.
    expect(second.inputs.value).toEqual({ text: { $ref: ref } });
    expect(second.version).toBe(2);
  });

  it('sends the run metadata from the execution input and strips it from input', async () => {
    // A step without its own input gets the workflow input (envelope v2 sends it only where a handler falls back to it).
    const { ir } = compileCase('d16-minimal.yaml');
    const bare = compileIr({ ...ir, workflow: { ...ir.workflow, steps: [{ ...ir.workflow.steps[0]!, input: undefined }] } });
    const run = await runScripted(bare, { topic: 'x', $stepforge: { idempotencyKey: 'k1', parentRunId: 'p0' } });
    const env = run.calls[0]!;
    expect(env.run).toEqual({ id: 'run-1', workflow: 'd16-minimal', idempotencyKey: 'k1', parentRunId: 'p0' });
    expect(env.inputs.input).toEqual({ topic: 'x' });
  });

  it('folds the Start Pass into a first Parallel: branches and later steps see the input and run metadata', async () => {
    const text = [
      'name: fan',
      'input: { topic: string }',
      'chain: "[a@web-search & b] > c"',
      'tasks:',
      '  a: { kind: model, prompt: "A on ${input.topic}" }',
      // "$input" and "$run" in prompt text are text, not variables: the fold must leave them alone.
      '  b: { kind: model, prompt: "B costs $input and $run on ${input.topic}" }',
      '  c: { kind: model, prompt: "C after ${steps.a.output} and ${steps.b.output} on ${input.topic}" }',
    ].join('\n');
    const compiled = compileDocument(text, { file: 'fan.chain.yaml' });
    const asl = compiled.asl as { StartAt: string; States: Record<string, Record<string, unknown>> };
    expect(asl.StartAt).toBe('[a & b]');
    // A branch starting with an agent loop takes the copies in its init Pass, a plain one in its Task.
    const [loop, plain] = (asl.States['[a & b]']!.Branches as { StartAt: string }[]).map((b) => b.StartAt);
    expect([loop, plain]).toEqual(['a: start', 'b']);
    expect(asl.States.Start).toBeUndefined();
    const run = await runScripted(compiled, { topic: 'owls', $stepforge: { idempotencyKey: 'k2' } });
    expect(run.result.status).toBe('SUCCEEDED');
    const byId = Object.fromEntries(run.calls.map((c) => [c.step.id, c]));
    for (const id of ['a', 'b', 'c'])
      expect(byId[id]!.run).toEqual({ id: 'run-1', workflow: 'fan', idempotencyKey: 'k2', parentRunId: null });
    expect(byId.a!.inputs.value).toBe('A on owls');
    expect(byId.b!.inputs.value).toBe('B costs $input and $run on owls');
    expect(byId.c!.inputs.value).toBe('C after a:done(web-search:ok) and b<B costs $input and $run on owls> on owls');
  });

  it('tells the handlers of steps whose output the state machine reads to keep it inline, and no others', async () => {
    const text = [
      'document: { dsl: "1.0", name: reads }',
      'agents: { a: {} }',
      'functions: { list: {}, use: {} }',
      'input: { topic: string }',
      'steps:',
      '  files: { call: function, function: list, input: { topic: "${ input.topic }" } }',
      '  summary: { call: agent, agent: a, input_template: "Summarise ${ steps.files.output }" }',
      '  notify: { call: function, function: use, when: "${ steps.summary.output != \'\' }", input: { first: "${ steps.files.output.first }" } }',
      '  each:',
      '    call: for_each',
      '    items: ${ steps.files.output.names }',
      '    do:',
      '      one: { call: agent, agent: a, input_template: "${ input.item }" }',
    ].join('\n');
    const compiled = compileDocument(text, { file: 'reads.yaml' });
    const run = await runScripted(compiled, { topic: 't' }, { files: () => ({ output: { first: 'a', names: ['a', 'b'] } }) });
    expect(run.result.status).toBe('SUCCEEDED');
    const flag = Object.fromEntries(run.calls.map((c) => [c.step.id, c.readByStateMachine === true]));
    // files: a field path (notify's input) and the for_each items; summary: the guard. `one` and `notify` are only handed on.
    expect(flag).toEqual({ files: true, summary: true, notify: false, one: false });
  });

  it("marks a for_each body's result step when a later guard reads the for_each's output", async () => {
    const text = [
      'document: { dsl: "1.0", name: each-read }',
      'agents: { a: {} }',
      'functions: { list: {}, use: {} }',
      'steps:',
      '  files: { call: function, function: list }',
      '  each:',
      '    call: for_each',
      '    items: ${ steps.files.output }',
      '    max_iterations: 3',
      '    do:',
      '      prep: { call: function, function: use, input: { f: "${ input.item }" } }',
      '      review: { call: agent, agent: a, input_template: "${ steps.prep.output }" }',
      '  report: { call: function, function: use, when: "${ steps.each.output[0] != null }", input: { all: "${ steps.each.output }" } }',
    ].join('\n');
    // Each of those outputs may be up to 32 KiB inline, so the default 50 iterations would not fit a state.
    const unbounded = (() => {
      try {
        compileDocument(text.replace('    max_iterations: 3\n', ''), { file: 'each-read.yaml' });
      } catch (e) {
        return e as StepforgeError;
      }
    })();
    expect(unbounded?.code).toBe('payload_budget');
    expect(unbounded?.hint).toContain('lower max_iterations');
    const compiled = compileDocument(text, { file: 'each-read.yaml' });
    const run = await runScripted(compiled, {}, { files: () => ({ output: ['x', 'y'] }) });
    expect(run.result.status).toBe('SUCCEEDED');
    const flag: Record<string, boolean> = {};
    for (const c of run.calls) flag[c.step.id] = c.readByStateMachine === true;
    // review's outputs make up each's output, which the guard reads; prep is only handed on.
    expect(flag).toEqual({ files: true, prep: false, review: true, report: false });
  });

  it('runs a for_each over a missing or null list no times, and over a single value once', async () => {
    const text = [
      'document: { dsl: "1.0", name: each-of }',
      'functions: { use: {} }',
      'input:',
      '  xs: { type: any, required: false }',
      'steps:',
      '  each:',
      '    call: for_each',
      '    items: ${ input.xs }',
      '    do:',
      '      w: { call: function, function: use, input: { v: "${ input.item }" } }',
    ].join('\n');
    const compiled = compileDocument(text, { file: 'each-of.yaml' });
    for (const [input, items] of [
      [{}, []],
      [{ xs: null }, []],
      [{ xs: [] }, []],
      [{ xs: 'abc' }, ['abc']],
      [{ xs: [1, 2] }, [1, 2]],
    ] as const) {
      const run = await runScripted(compiled, input, { w: () => ({ output: null }) });
      expect([input, run.result.status, run.calls.map((c) => (c.inputs as { value?: { v?: unknown } }).value?.v)]).toEqual([
        input,
        'SUCCEEDED',
        items,
      ]);
    }
  });

  it('runs a non-series-parallel DAG with every dependency respected', async () => {
    const order: string[] = [];
    const record = (env: Parameters<typeof defaultAnswer>[0]) => {
      order.push(env.step.id);
      return defaultAnswer(env);
    };
    const run = await runScripted(compileCase('d31-non-sp.yaml'), {}, { a: record, b: record, c: record, d: record });
    expect(run.result.output).toBe('d<a<a> b<b>>');
    expect(order.indexOf('a')).toBeLessThan(order.indexOf('c'));
    expect(order.indexOf('b')).toBeLessThan(order.indexOf('d'));
  });
});

describe('Function: compileDocument (quotas and names)', () => {
  const dsl = (steps: string) => `document: { dsl: "1.0", name: q }\nagents: { a: {} }\nfunctions: { f: {} }\nsteps:\n${steps}`;

  it('rejects a worst-case history over 25,000 events with history_limit and the step to change', () => {
    const text = dsl(`  many:
    call: for_each
    items: \${ input.xs }
    max_iterations: 10000
    do:
      w: { call: function, function: f }
`);
    let err: unknown;
    try {
      compileDocument(text, { file: 'q.yaml' });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ name: 'StepforgeError', code: 'history_limit', location: { file: 'q.yaml', line: 5, column: 3 } });
    expect((err as Error).message).toMatch(/step 'many' alone/);
    expect((err as { hint?: string }).hint).toMatch(/max_iterations/);
  });

  it('accepts the same workflow as Express', () => {
    const text = dsl(`  many:
    call: for_each
    items: \${ input.xs }
    max_iterations: 40
    do:
      w: { call: function, function: f }
`);
    expect(compileDocument(text, { express: true }).manifest.type).toBe('EXPRESS');
  });

  it('rejects a for_each whose collected outputs exceed the payload budget with payload_budget', () => {
    const text = dsl(`  rows:
    call: for_each
    items: \${ input.m }
    max_iterations: 500
    do:
      w: { call: function, function: f }
`);
    expect(() => compileDocument(text, { file: 'q.yaml' })).toThrowError(
      expect.objectContaining({ code: 'payload_budget', message: expect.stringMatching(/step 'rows' may carry up to 349 KiB/) }),
    );
  });

  it('rejects non-ASCII and over-long state names from IR with state_name', () => {
    const ir = (id: string): IrDocument => ({
      name: 'n',
      format: 'dsl',
      workflow: {
        steps: [
          { id, kind: 'function', identity: 'i', config: {}, tools: [], secrets: [], location: { file: 'n.yaml', line: 3, column: 5 } },
        ],
        edges: [],
      },
    });
    expect(() => compileIr(ir('résumé'))).toThrowError(
      expect.objectContaining({
        code: 'state_name',
        message: expect.stringMatching(/non-ASCII/),
        location: { file: 'n.yaml', line: 3, column: 5 },
      }),
    );
    expect(() => compileIr(ir('x'.repeat(81)))).toThrowError(
      expect.objectContaining({ code: 'state_name', message: expect.stringMatching(/81 characters/) }),
    );
  });

  it('reports the synchronisation edge of an N-shaped DAG in explain', () => {
    const r = compileCase('c03-n-shape.chain.yaml');
    expect(r.explain.addedEdges).toEqual([['b', 'c']]);
    expect(r.explain.estimatedSlowdown).toBe(1);
  });

  it('lists handlers, tools, secrets and placeholders in the manifest', () => {
    const r = compileCase('d27-secrets.yaml');
    expect(r.manifest.steps[0]).toMatchObject({ id: 'pay', kind: 'function', handler: 'function', secrets: ['stripe-key'], state: 'pay' });
    expect(r.manifest.placeholders).toEqual(['${FunctionStepFunctionArn}']);
    const c = compileCase('c01-sequence.chain.yaml');
    expect(c.manifest.steps[0]).toMatchObject({
      id: 'plan',
      tools: ['web-search'],
      functions: ['${ModelStepFunctionArn}', '${ToolStepFunctionArn}'],
      budget: { maxTurns: 3, maxToolCalls: 2 },
    });
  });
});
