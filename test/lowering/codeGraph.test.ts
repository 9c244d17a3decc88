// Kortyx workflows written in code, compiled through the IR and run on the embedded engine; each
// node's script calls the node function itself, as the function handler does.
import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { codeChildren, codeToIr, compileIr, defineWorkflow, useWorkflow, type WorkflowDefinition } from '@stepforge/compiler';
import { type StepEnvelope } from '@stepforge/contract';
import { codeFunction } from '../../packages/runtime/src/steps/codeNodeStep.js';
import { runScripted, type Script } from './scriptedRuntime.js';

const named = (name: string, message = 'boom') => Object.assign(new Error(message), { name });

function compile(def: WorkflowDefinition) {
  return compileIr(codeToIr(def, { module: '/project/flow.ts', exportName: 'flow', file: 'flow.ts' }));
}

/** Scripts that call the definition's node functions with the run state and params. */
function nodes(def: WorkflowDefinition, override: Record<string, Script> = {}): Record<string, Script> {
  return Object.fromEntries(
    Object.keys(def.nodes).map((n) => [
      `${def.id}.${n}`,
      override[n] ??
        ((env: StepEnvelope) => ({
          output: (def.nodes[n]!.run as (a: unknown) => unknown)({ input: env.inputs.value, params: env.config.params ?? {} }),
        })),
    ]),
  );
}

const support = defineWorkflow({
  id: 'support',
  version: '1.0.0',
  description: 'Simple support flow',
  nodes: {
    classify: {
      run: ({ input }: { input: { text: string } }) =>
        input.text.includes('refund')
          ? { condition: 'refund', data: { kind: 'refund' } }
          : { intent: 'support.answer', data: { kind: 'question' } },
      behavior: { retry: { maxAttempts: 2, delayMs: 200 } },
    },
    answer: {
      run: ({ input, params }: { input: Record<string, unknown>; params: { tone: string } }) => ({
        data: { reply: `${params.tone}: ${String(input.kind)}` },
      }),
      params: { tone: 'kind' },
    },
    refund: { run: () => ({ data: { reply: 'refund started' } }) },
  },
  edges: [
    ['__start__', 'classify'],
    ['classify', 'refund', { when: 'refund' }],
    ['classify', 'answer', { when: 'support.answer' }],
    ['answer', '__end__'],
    ['refund', '__end__'],
  ],
});

describe('Function: codeToIr', () => {
  it('names the states after the nodes and routes with Choice states', () => {
    const c = compile(support);
    const states = c.asl.States as Record<string, { Type: string; Retry?: { MaxAttempts: number; IntervalSeconds: number }[] }>;
    expect(states.classify!.Type).toBe('Task');
    expect(states.answer!.Type).toBe('Task');
    expect(states['support: classify next?']!.Type).toBe('Choice');
    expect(states.classify!.Retry!.at(-1)).toMatchObject({ MaxAttempts: 1, IntervalSeconds: 1, BackoffRate: 1, JitterStrategy: 'NONE' });
    expect(c.manifest.format).toBe('code');
  });

  it('refuses an export that is not a workflow with invalid_document', () => {
    expect(() => codeToIr({ id: 'x' }, { module: '/m.ts', exportName: 'helper' })).toThrow(
      expect.objectContaining({ code: 'invalid_document', message: "export 'helper' is not a workflow" }),
    );
  });
});

describe('Function: lowerCodeGraph (run on the embedded engine)', () => {
  it('follows the edge whose when matches the returned condition', async () => {
    const run = await runScripted(compile(support), { text: 'I want a refund' }, nodes(support));
    expect(run.result.status).toBe('SUCCEEDED');
    expect(run.result.output).toEqual({ text: 'I want a refund', kind: 'refund', reply: 'refund started' });
    expect(run.calls.map((c) => c.config.codeNode)).toEqual(['classify', 'refund']);
  });

  it('follows the edge whose when matches the returned intent, with the node params', async () => {
    const run = await runScripted(compile(support), { text: 'how do I log in' }, nodes(support));
    expect(run.result.output).toEqual({ text: 'how do I log in', kind: 'question', reply: 'kind: question' });
    expect(run.calls.map((c) => c.config.codeNode)).toEqual(['classify', 'answer']);
  });

  it('retries a node up to behavior.retry.maxAttempts and then fails naming the node', async () => {
    const run = await runScripted(
      compile(support),
      { text: 'x' },
      nodes(support, {
        classify: () => {
          throw named('NodeError', "node 'classify' threw Error: down");
        },
      }),
    );
    expect(run.result.status).toBe('FAILED');
    expect(run.result.error).toBe('NodeError');
    expect(run.result.cause).toContain("node 'classify' threw Error: down");
    expect(run.calls.filter((c) => c.config.codeNode === 'classify')).toHaveLength(2);
  });

  it('stops a cycle that never ends with MaxIterationsExceeded after 25 node runs', async () => {
    const loop = defineWorkflow({
      id: 'loop',
      version: '1',
      nodes: { again: { run: () => ({ condition: 'more' }) } },
      edges: [
        ['__start__', 'again'],
        ['again', 'again', { when: 'more' }],
        ['again', '__end__'],
      ],
    });
    const run = await runScripted(compile(loop), {}, nodes(loop));
    expect(run.result.status).toBe('FAILED');
    expect(run.result.error).toBe('MaxIterationsExceeded');
    expect(run.calls).toHaveLength(25);
  });
});

describe('Function: lowerCodeGraph (Kortyx run state and routing)', () => {
  it("deep-merges each node's data into the run state, as Kortyx does (arrays replace)", async () => {
    const flow = defineWorkflow({
      id: 'merge',
      version: '1',
      nodes: {
        a: { run: () => ({ data: { user: { name: 'ann' }, tags: ['x', 'y'] } }) },
        b: { run: () => ({ data: { user: { age: 3 }, tags: ['z'] } }) },
      },
      edges: [
        ['__start__', 'a'],
        ['a', 'b'],
        ['b', '__end__'],
      ],
    });
    const run = await runScripted(compile(flow), { user: { id: 1 } }, nodes(flow));
    expect(run.result.status).toBe('SUCCEEDED');
    expect(run.result.output).toEqual({ user: { id: 1, name: 'ann', age: 3 }, tags: ['z'] });
  });

  it('routes on the returned condition when there is one, so a condition no edge names ends the workflow whatever the intent', async () => {
    const flow = defineWorkflow({
      id: 'cond',
      version: '1',
      nodes: {
        a: { run: () => ({ condition: 'unnamed', intent: 'go', data: { at: 'a' } }) },
        b: { run: () => ({ data: { at: 'b' } }) },
      },
      edges: [
        ['__start__', 'a'],
        ['a', 'b', { when: 'go' }],
        ['b', '__end__'],
      ],
    });
    const run = await runScripted(compile(flow), {}, nodes(flow));
    expect(run.result.status).toBe('SUCCEEDED');
    expect(run.result.output).toEqual({ at: 'a' });
    expect(run.calls.map((c) => c.config.codeNode)).toEqual(['a']);
  });
});

describe('Function: codeToIr (useWorkflow)', () => {
  const aslValidator = createRequire(import.meta.url)('asl-validator') as (d: unknown) => {
    isValid: boolean;
    errorsText(sep?: string): string;
  };
  const schema = { safeParse: (v: unknown) => ({ success: true, data: v }) };
  const child = defineWorkflow({
    id: 'quote',
    version: '1',
    inputSchema: schema,
    outputSchema: schema,
    nodes: { price: { run: () => ({ data: { price: 1 } }) } },
    edges: [
      ['__start__', 'price'],
      ['price', '__end__'],
    ],
  });
  const parent = defineWorkflow({
    id: 'order',
    version: '1',
    nodes: {
      quote: { run: useWorkflow(child, (s: { sku: string }) => ({ sku: s.sku })), behavior: { retry: { maxAttempts: 2, delayMs: 1000 } } },
      done: { run: () => ({}) },
    },
    edges: [
      ['__start__', 'quote'],
      ['quote', 'done'],
      ['done', '__end__'],
    ],
  });
  const compileWith = (def: WorkflowDefinition, exports: Record<string, unknown>) =>
    compileIr(codeToIr(def, { module: '/project/flow.ts', exportName: 'order', file: 'flow.ts', exports }));

  it('lowers the node to its input check, a startExecution.sync:2 Task named after it, and its output check', () => {
    const c = compileWith(parent, { order: parent, quoteFlow: child });
    const states = c.asl.States as Record<string, Record<string, unknown>>;
    expect(states['order: quote input']).toMatchObject({
      Type: 'Task',
      Next: 'quote',
      Arguments: { config: { codeNode: 'quote', codeFn: 'childInput', codeChild: 'quote' } },
    });
    expect(states.quote).toMatchObject({
      Type: 'Task',
      Resource: 'arn:aws:states:::states:startExecution.sync:2',
      Next: 'order: quote output',
      Arguments: {
        StateMachineArn: '{% $substringBefore($states.context.StateMachine.Id, ":stateMachine:") & ":stateMachine:" & "quote" %}',
      },
      Retry: [{ ErrorEquals: ['States.TaskFailed', 'States.Timeout'], MaxAttempts: 1, IntervalSeconds: 1 }],
    });
    expect(states['order: quote output']).toMatchObject({
      Type: 'Task',
      Next: 'order: quote next?',
      Arguments: { config: { codeFn: 'childOutput', codeChild: 'quote' } },
    });
    expect(codeChildren(c.ir)).toEqual([{ name: 'quote', id: 'quote', exportName: 'quoteFlow' }]);
    const v = aslValidator(structuredClone(c.asl));
    expect(v.isValid ? '' : v.errorsText('\n')).toBe('');
  });

  it('refuses a child the module does not export, naming the node and the child', () => {
    expect(() => compileWith(parent, { order: parent })).toThrow(
      expect.objectContaining({
        code: 'invalid_workflow',
        message: "export 'order': node 'quote' calls workflow 'quote' with useWorkflow, which the module does not export",
      }),
    );
  });

  it('refuses a workflow that calls itself, directly or through another', () => {
    const self: { id: string; version: string; nodes: Record<string, unknown>; edges: unknown[] } = {
      id: 'loop',
      version: '1',
      nodes: {},
      edges: [
        ['__start__', 'again'],
        ['again', '__end__'],
      ],
    };
    self.nodes.again = { run: useWorkflow(self as unknown as WorkflowDefinition) };
    const wf = defineWorkflow(self as unknown as WorkflowDefinition);
    expect(() => compileWith(wf, { loop: wf })).toThrow(
      expect.objectContaining({
        code: 'invalid_workflow',
        message: expect.stringContaining("node 'again' calls workflow 'loop' with useWorkflow, which leads back to 'loop' (loop → loop)"),
      }),
    );
    const a: { id: string; version: string; nodes: Record<string, unknown>; edges: unknown[] } = {
      id: 'a',
      version: '1',
      nodes: {},
      edges: [
        ['__start__', 'x'],
        ['x', '__end__'],
      ],
    };
    const b = defineWorkflow({
      id: 'b',
      version: '1',
      nodes: { y: { run: useWorkflow(a as unknown as WorkflowDefinition) } },
      edges: [
        ['__start__', 'y'],
        ['y', '__end__'],
      ],
    });
    a.nodes.x = { run: useWorkflow(b) };
    const defined = defineWorkflow(a as unknown as WorkflowDefinition);
    expect(() => compileWith(defined, { a: defined, b })).toThrow(
      expect.objectContaining({
        message: expect.stringContaining("node 'x' calls workflow 'b' with useWorkflow, which leads back to 'a' (a → b → a)"),
      }),
    );
  });

  it('refuses at run time a useWorkflow returned from a node function (WorkflowCallNotDeclared, naming the node and the child)', async () => {
    const inBody = defineWorkflow({
      id: 'p',
      version: '1',
      nodes: { a: { run: () => useWorkflow(child) as never } },
      edges: [
        ['__start__', 'a'],
        ['a', '__end__'],
      ],
    });
    await expect(codeFunction(inBody, 'a', {})!({})).rejects.toMatchObject({
      name: 'WorkflowCallNotDeclared',
      message: expect.stringContaining("node 'a' returned useWorkflow('quote') from its function: give it as the node's run instead"),
    });
  });

  it('compiles a hand-off to each other Kortyx workflow of the module: a Choice at the end, a nested execution per workflow', () => {
    const billing = defineWorkflow({
      id: 'billing',
      version: '1',
      nodes: { b: { run: () => ({}) } },
      edges: [
        ['__start__', 'b'],
        ['b', '__end__'],
      ],
    });
    const desk = defineWorkflow({
      id: 'desk',
      version: '1',
      nodes: { a: { run: () => ({ transitionTo: 'billing' }) } },
      edges: [
        ['__start__', 'a'],
        ['a', '__end__'],
      ],
    });
    const ir = codeToIr(desk, { module: '/project/flow.ts', exportName: 'desk', exports: { desk, billing, helper: () => 1 } });
    expect(codeChildren(ir)).toEqual([{ name: 'billing', id: 'billing', exportName: 'billing' }]);
    const states = compileIr(ir).asl.States as Record<
      string,
      {
        Type: string;
        Next?: string;
        Default?: string;
        Resource?: string;
        Arguments?: Record<string, string>;
        Choices?: { Condition: string; Next: string }[];
      }
    >;
    expect(states.a!.Next).toBe('desk: hand off?');
    expect(states['desk: hand off?']).toMatchObject({
      Type: 'Choice',
      Default: 'desk: end',
      Choices: [{ Next: 'desk: hand off to billing' }],
    });
    expect(states['desk: hand off to billing']).toMatchObject({
      Type: 'Task',
      Resource: 'arn:aws:states:::states:startExecution.sync:2',
      Next: 'desk: end',
    });
    expect(states['desk: hand off to billing']!.Arguments!.StateMachineArn).toContain('":stateMachine:" & "billing"');
    // Without other workflows in the module there is nothing to hand over to: no hand-off states.
    expect(Object.keys(compile(desk as WorkflowDefinition).asl.States as object).some((n) => n.includes('hand off'))).toBe(false);
  });

  it('refuses at run time a transitionTo naming no workflow it may hand over to (HandoffTargetUnknown, naming the node)', async () => {
    const handsOff = defineWorkflow({
      id: 'p',
      version: '1',
      nodes: { a: { run: () => ({ transitionTo: 'billing', data: { x: 1 } }) } },
      edges: [
        ['__start__', 'a'],
        ['a', '__end__'],
      ],
    });
    await expect(codeFunction(handsOff, 'a', {})!({})).rejects.toMatchObject({
      name: 'HandoffTargetUnknown',
      details: { node: 'a', workflow: 'billing', workflows: [] },
      message:
        'node \'a\' returned transitionTo "billing", but the module exports no other Kortyx workflow to hand the run over to: export the workflow with that id (defineWorkflow) from the same module',
    });
    await expect(codeFunction(handsOff, 'a', { codeHandoffs: ['sales'] })!({})).rejects.toMatchObject({
      name: 'HandoffTargetUnknown',
      message: expect.stringContaining('which is no other Kortyx workflow the module exports (sales)'),
    });
    expect(await codeFunction(handsOff, 'a', { codeHandoffs: ['billing'] })!({})).toEqual({ transitionTo: 'billing', data: { x: 1 } });
  });

  it('refuses useWorkflow given a workflow id rather than the workflow', () => {
    expect(() =>
      defineWorkflow({
        id: 'p',
        version: '1',
        nodes: { a: { run: useWorkflow('quote' as unknown as WorkflowDefinition) } },
        edges: [
          ['__start__', 'a'],
          ['a', '__end__'],
        ],
      }),
    ).toThrow(
      expect.objectContaining({
        code: 'invalid_workflow',
        message: expect.stringContaining("nodes.a.run: node 'a': useWorkflow needs the child workflow itself"),
      }),
    );
  });
});
