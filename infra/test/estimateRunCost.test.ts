import { describe, expect, it } from 'vitest';
import { estimateRunCost, sampleInput } from '../lib/cost/estimateRunCost.js';

const task = (placeholder: string, id: string, next?: string) => ({
  Type: 'Task',
  Resource: 'arn:aws:states:::lambda:invoke',
  Arguments: { FunctionName: '${' + placeholder + '}', Payload: { version: 1, step: { id } } },
  Output: '{% $states.result.Payload.output %}',
  ...(next ? { Next: next } : { End: true }),
});

const ASL = {
  QueryLanguage: 'JSONata',
  StartAt: 'Start',
  States: {
    Start: { Type: 'Pass', Next: 'write' },
    write: task('ModelStepFunctionArn', 'write', 'fan out'),
    'fan out': {
      Type: 'Parallel',
      Branches: [
        { StartAt: 'notify', States: { notify: task('ConnectorStepFunctionArn', 'notify') } },
        { StartAt: 'store', States: { store: task('FunctionStepFunctionArn', 'store') } },
      ],
      Next: 'Done',
    },
    Done: { Type: 'Succeed' },
  },
};

const MANIFEST = {
  steps: [
    { id: 'write', handler: 'model', states: ['write'], tools: [] },
    { id: 'notify', handler: 'connector', states: ['notify'], tools: [] },
    { id: 'store', handler: 'function', states: ['store'], tools: [] },
  ],
};

describe('Function: estimateRunCost', () => {
  it('counts entered states, Lambda invocations and DynamoDB writes of one scripted run', async () => {
    const est = await estimateRunCost(ASL, MANIFEST, {}, false);
    expect(est.status).toBe('SUCCEEDED');
    // Start, write, fan out, notify, store, Done
    expect(est.transitions).toBe(6);
    expect(est.invocationsByHandler).toEqual({ model: 1, connector: 1, function: 1 });
    expect(est.lambdaInvocations).toBe(3);
    // 2 per run + 2 per invocation (claim, commit) + 1 per model turn
    expect(est.dynamoWrites).toBe(2 + 6 + 1);
    // model 2000 ms, then the longer branch (connector 300 ms)
    expect(est.durationMs).toBe(2300);
    expect(est.plainSteps).toBe(3);
    expect(est.plainStepRuns).toBe(3);
    expect(est.transitionsPerPlainStep).toBe(2);
  });

  it('prices a million runs at us-east-1 list prices', async () => {
    const { perMillion } = await estimateRunCost(ASL, MANIFEST, {}, false);
    expect(perMillion.standard).toBeCloseTo(6 * 25, 6);
    expect(perMillion.express).toBeCloseTo(1 + 2.3 * 0.0625 * 0.00001667 * 1e6, 6);
    const lambda = 3 * 0.2 + (2 * 0.5 + 0.3 * 0.25 + 0.2 * 0.5) * 0.0000133334 * 1e6;
    expect(perMillion.lambda).toBeCloseTo(lambda, 6);
    expect(perMillion.dynamo).toBeCloseTo(9 * 0.625, 6);
    expect(perMillion.totalStandard).toBeCloseTo(150 + lambda + 9 * 0.625, 6);
  });

  it('drives an agent loop through one tool round and attributes its states to the loop', async () => {
    const asl = {
      QueryLanguage: 'JSONata',
      StartAt: 'Start',
      States: {
        Start: { Type: 'Pass', Assign: { turn: 0 }, Next: 'plan' },
        plan: {
          Type: 'Task',
          Resource: 'arn:aws:states:::lambda:invoke',
          Arguments: { FunctionName: '${ModelStepFunctionArn}', Payload: { tools: ['web-search'], turn: { index: '{% $turn %}' } } },
          Assign: { reply: '{% $states.result.Payload %}' },
          Next: 'more?',
        },
        'more?': { Type: 'Choice', Choices: [{ Condition: '{% $reply.done %}', Next: 'Done' }], Default: 'tools' },
        tools: {
          Type: 'Map',
          Items: '{% $reply.toolCalls %}',
          ItemProcessor: {
            StartAt: 'tool',
            States: {
              tool: {
                Type: 'Task',
                Resource: 'arn:aws:states:::lambda:invoke',
                Arguments: { FunctionName: '${ToolStepFunctionArn}', Payload: { toolCall: '{% $states.input %}' } },
                End: true,
              },
            },
          },
          Assign: { turn: '{% $turn + 1 %}' },
          Next: 'plan',
        },
        Done: { Type: 'Succeed' },
      },
    };
    const est = await estimateRunCost(
      asl,
      { steps: [{ id: 'plan', handler: 'model', states: ['plan', 'more?', 'tools', 'tool'], tools: ['web-search'] }] },
      {},
      false,
    );
    expect(est.status).toBe('SUCCEEDED');
    expect(est.invocationsByHandler).toEqual({ model: 2, tool: 2 });
    // Start, plan, more?, tools, tool ×2, plan, more?, Done
    expect(est.transitions).toBe(9);
    expect(est.agentLoopTransitions).toBe(7);
    expect(est.plainSteps).toBe(0);
    expect(est.plainStepRuns).toBe(0);
    expect(est.transitionsPerPlainStep).toBe(0);
  });
});

describe('Function: estimateRunCost (loops)', () => {
  it('counts a plain step once per Map iteration, and the Map itself as overhead', async () => {
    const asl = {
      QueryLanguage: 'JSONata',
      StartAt: 'each file',
      States: {
        'each file': {
          Type: 'Map',
          Items: '{% $states.input.files %}',
          ItemProcessor: { StartAt: 'review', States: { review: task('ModelStepFunctionArn', 'review') } },
          End: true,
        },
      },
    };
    const manifest = {
      steps: [
        { id: 'each', handler: null, state: 'each file', states: ['each file'], tools: [] },
        { id: 'review', handler: 'model', state: 'review', states: ['review'], tools: [] },
      ],
    };
    const est = await estimateRunCost(asl, manifest, { files: ['a', 'b', 'c'] }, false);
    expect(est.status).toBe('SUCCEEDED');
    expect(est.transitions).toBe(4);
    // The work is the three reviews; the Map state is control around them.
    expect(est.plainStepRuns).toBe(3);
    expect(est.invocationsByHandler).toEqual({ model: 3 });
    expect(est.transitionsPerPlainStep).toBeCloseTo(4 / 3);
  });
});

describe('Function: estimateRunCost (guards and loop exits)', () => {
  const guarded = (go: boolean) => ({
    QueryLanguage: 'JSONata',
    StartAt: 'write',
    States: {
      write: task('ModelStepFunctionArn', 'write', 'notify: when'),
      'notify: when': {
        Type: 'Choice',
        Choices: [{ Condition: `{% ${go ? 'false' : 'true'} %}`, Assign: { notify: null }, Next: 'Output' }],
        Default: 'notify',
      },
      notify: task('ConnectorStepFunctionArn', 'notify', 'Output'),
      Output: { Type: 'Pass', End: true },
    },
  });
  const manifest = {
    steps: [
      { id: 'write', handler: 'model', states: ['write'], tools: [] },
      { id: 'notify', handler: 'connector', states: ['notify', 'notify: when'], tools: [] },
    ],
  };

  it('counts a step its guard skipped as one visit, and a step that ran once', async () => {
    const skipped = await estimateRunCost(guarded(false), manifest, {}, false);
    // write, notify: when, Output — for two steps reached, one of them skipped
    expect(skipped.transitions).toBe(3);
    expect(skipped.skippedStepRuns).toBe(1);
    expect(skipped.plainStepRuns).toBe(2);
    const ran = await estimateRunCost(guarded(true), manifest, {}, false);
    expect(ran.transitions).toBe(4);
    expect(ran.skippedStepRuns).toBe(0);
    expect(ran.plainStepRuns).toBe(2);
  });

  it("counts the Pass that ends a branch after an agent loop as the loop's own, and reports it apart", async () => {
    const asl = {
      QueryLanguage: 'JSONata',
      StartAt: 'fan out',
      States: {
        'fan out': {
          Type: 'Parallel',
          Branches: [
            {
              StartAt: 'plan',
              States: {
                plan: {
                  ...task('ModelStepFunctionArn', 'plan', 'plan: tool calls?'),
                  Arguments: { FunctionName: '${ModelStepFunctionArn}', Payload: { tools: ['web-search'], turn: { index: 1 } } },
                },
                'plan: tool calls?': { Type: 'Choice', Choices: [{ Condition: '{% true %}', Next: 'plan: end' }], Default: 'plan: end' },
                'plan: end': { Type: 'Pass', End: true },
              },
            },
            { StartAt: 'store', States: { store: task('FunctionStepFunctionArn', 'store') } },
          ],
          End: true,
        },
      },
    };
    const est = await estimateRunCost(
      asl,
      {
        steps: [
          { id: 'plan', handler: 'model', states: ['plan', 'plan: tool calls?', 'plan: end'], tools: ['web-search'] },
          { id: 'store', handler: 'function', states: ['store'], tools: [] },
        ],
      },
      {},
      false,
    );
    expect(est.transitions).toBe(5);
    expect(est.agentLoopTransitions).toBe(3);
    expect(est.agentLoopExitTransitions).toBe(1);
    // fan out + store, for the one plain step
    expect(est.transitionsPerPlainStep).toBe(2);
  });
});

describe('Function: sampleInput', () => {
  it('gives each declared field a value of its type, defaults first', () => {
    expect(
      sampleInput({
        topic: 'string',
        n: 'integer',
        flag: { type: 'boolean' },
        items: 'array',
        o: 'object',
        r: { type: 'string', default: 'x' },
      }),
    ).toEqual({
      topic: 'sample',
      n: 3,
      flag: true,
      items: ['item-1', 'item-2', 'item-3'],
      o: { id: 'sample-1' },
      r: 'x',
    });
  });
});
