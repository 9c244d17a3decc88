import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVirtualClock, executeStateMachine, type TaskInvoker } from '@stepforge/engine';
import { corpusMissingReason, warnCorpusMissing } from '../conformance/corpusDir.js';

const runs = Number(process.env.STEPFORGE_FUZZ_RUNS) || (process.env.STEPFORGE_LONG ? 100_000 : 300);
const names = ['A', 'B', 'C', 'D'];
const pathish = fc.constantFrom('$', '$.a', '$.a.b', '$.x[0]', '$[*]', '$$.Execution.Id', '$.nope', 'not a path', '$..a', '$.a[?(@ > 1)]');
const jsonata = fc.constantFrom(
  '{% $states.input %}',
  '{% $states.input.a %}',
  '{% 1 + %}',
  '{% $x %}',
  '{% [1,2] %}',
  '{% $states.input.a > 1 %}',
);
const subMachine = fc.constantFrom(
  { StartAt: 'P', States: { P: { Type: 'Pass', End: true } } },
  { StartAt: 'P', States: { P: { Type: 'Fail', Error: 'E' } } },
  { StartAt: 'P', States: { P: { Type: 'Task', Resource: 'arn:aws:states:::x:y', End: true } } },
  { StartAt: 'Q', States: { P: { Type: 'Pass', End: true } } },
);
const choiceRule = fc.oneof(
  fc.record({ Variable: pathish, Next: fc.constantFrom(...['A', 'B', 'Missing']), NumericEquals: fc.jsonValue({ maxDepth: 0 }) }),
  fc.record({ Variable: pathish, Next: fc.constant('B'), IsPresent: fc.boolean() }),
  fc.record({ Condition: jsonata, Next: fc.constant('C') }),
  fc.record({ Not: fc.record({ Variable: pathish, StringEquals: fc.string() }), Next: fc.constant('D') }),
  fc.record({ And: fc.array(fc.record({ Variable: pathish, BooleanEquals: fc.boolean() }), { maxLength: 2 }), Next: fc.constant('A') }),
);
const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  pathish,
  jsonata,
  fc.array(subMachine, { maxLength: 2 }),
  subMachine,
  fc.array(choiceRule, { maxLength: 3 }),
  fc.array(
    fc.record({
      ErrorEquals: fc.constantFrom(['States.ALL'], ['E'], []),
      Next: fc.constantFrom('A', 'B'),
      MaxAttempts: fc.integer({ min: -1, max: 2 }),
    }),
    { maxLength: 2 },
  ),
);
const fieldNames = [
  'Next',
  'End',
  'InputPath',
  'OutputPath',
  'ResultPath',
  'Parameters',
  'Result',
  'ResultSelector',
  'Assign',
  'Output',
  'Arguments',
  'Choices',
  'Default',
  'Seconds',
  'SecondsPath',
  'Timestamp',
  'TimestampPath',
  'Error',
  'Cause',
  'ErrorPath',
  'CausePath',
  'Resource',
  'Retry',
  'Catch',
  'TimeoutSeconds',
  'HeartbeatSeconds',
  'Branches',
  'ItemProcessor',
  'ItemsPath',
  'Items',
  'MaxConcurrency',
  'QueryLanguage',
];
const state = fc
  .record({
    Type: fc.constantFrom('Pass', 'Task', 'Choice', 'Wait', 'Succeed', 'Fail', 'Parallel', 'Map', 'Bogus'),
    fields: fc.dictionary(fc.constantFrom(...fieldNames), anyValue, { maxKeys: 4 }),
    next: fc.constantFrom(...names, 'Missing'),
    end: fc.boolean(),
  })
  .map(({ Type, fields, next, end }) => ({ ...fields, Type, ...(end ? { End: true } : { Next: next }) }));
const definition = fc
  .record({
    QueryLanguage: fc.constantFrom(undefined, 'JSONPath', 'JSONata'),
    States: fc.tuple(state, state, state, state),
  })
  .map(({ QueryLanguage, States }) => ({
    ...(QueryLanguage ? { QueryLanguage } : {}),
    StartAt: 'A',
    States: Object.fromEntries(States.map((s, i) => [names[i]!, s])),
  }));

const invoker: TaskInvoker = { invoke: async (inv) => ({ echoed: inv.input }), supports: () => undefined };

describe('Function: executeStateMachine (robustness)', () => {
  it('either rejects a random definition as InvalidDefinition or runs it to a terminal status, never crashing', async () => {
    await fc.assert(
      fc.asyncProperty(definition, fc.jsonValue({ maxDepth: 2 }), async (def, input) => {
        let result;
        try {
          result = await executeStateMachine(def, input, { invoker, clock: createVirtualClock(0), maxHistoryEvents: 500 });
        } catch (e) {
          expect((e as Error).name).toBe('InvalidDefinition');
          return;
        }
        expect(['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']).toContain(result.status);
        if (result.status === 'FAILED') expect(typeof result.error === 'string' || result.error === undefined).toBe(true);
      }),
      { numRuns: runs },
    );
  });
});

const corpusMissing = corpusMissingReason();
warnCorpusMissing(corpusMissing);

describe('Function: executeStateMachine (robustness on recorded definitions)', () => {
  // Without the corpus this shows as skipped, with where it looked, rather than as a pass.
  it.skipIf(corpusMissing !== undefined)(
    `runs any corpus definition on any JSON input to a terminal status with a named error${corpusMissing ? ` (skipped: ${corpusMissing})` : ''}`,
    async () => {
      const { loadCases } = await import('../conformance/runCase.js');
      const { createLambdaInvoker } = await import('@stepforge/engine');
      const { conformanceLambda } = await import('../conformance/lambdas.js');
      const cases = loadCases().filter((c) => c.services.length === 0);
      await fc.assert(
        fc.asyncProperty(fc.nat({ max: cases.length - 1 }), fc.jsonValue({ maxDepth: 3 }), async (i, input) => {
          const c = cases[i]!;
          const clock = createVirtualClock(0);
          const handlers = Object.fromEntries(Object.entries(c.lambdas).map(([k, kind]) => [k, conformanceLambda(kind, clock)!]));
          const r = await executeStateMachine(c.definition, input, {
            invoker: createLambdaInvoker(handlers, {
              partition: '<partition>',
              region: '<region>',
              account: '111111111111',
              runtime: 'python',
            }),
            clock,
            maxHistoryEvents: 2000,
          });
          expect(['SUCCEEDED', 'FAILED']).toContain(r.status);
          // A failure is reported as data (status/error/cause), never as a rejected promise.
          if (r.status === 'FAILED') expect(['string', 'undefined']).toContain(typeof r.error);
          expect(r.events.at(-1)?.type).toBe(r.status === 'SUCCEEDED' ? 'ExecutionSucceeded' : 'ExecutionFailed');
        }),
        { numRuns: Math.min(runs, 500) },
      );
    },
  );
});
