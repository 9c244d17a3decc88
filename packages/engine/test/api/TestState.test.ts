import { TestStateCommand, type SFNClient, type TestStateCommandInput } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngineServer, type EngineServer } from '@stepforge/engine';
import { sdkError, sfnClient } from './helpers.js';

const FN = 'arn:aws:lambda:us-east-1:123456789012:function:';
let calls = 0;

describe('TestState', () => {
  let server: EngineServer;
  let client: SFNClient;
  beforeAll(async () => {
    server = await startEngineServer({
      handlers: {
        async add(e: unknown) {
          calls++;
          const { a, b } = e as { a: number; b: number };
          return { sum: a + b };
        },
        async boom() {
          calls++;
          throw Object.assign(new Error('the model is down'), { name: 'ModelDown' });
        },
      },
    });
    client = sfnClient(server.url);
  });
  afterAll(async () => {
    client.destroy();
    await server.close();
  });
  const test = (input: Omit<TestStateCommandInput, 'definition'> & { definition: unknown }) =>
    client.send(new TestStateCommand({ ...input, definition: JSON.stringify(input.definition) } as TestStateCommandInput));

  it('runs a Task once and reports its output, the next state and what the history shows', async () => {
    calls = 0;
    const out = await test({
      definition: { Type: 'Task', Resource: `${FN}add`, Parameters: { 'a.$': '$.x', b: 2 }, ResultPath: '$.r', Next: 'Publish' },
      input: JSON.stringify({ x: 40 }),
    });
    expect(out).toMatchObject({ status: 'SUCCEEDED', nextState: 'Publish', output: JSON.stringify({ x: 40, r: { sum: 42 } }) });
    expect(out.inspectionData).toMatchObject({ input: '{"x":40}', result: '{"sum":42}', afterResultPath: '{"x":40,"r":{"sum":42}}' });
    expect(calls).toBe(1);
  });

  it('follows Choice rules and Default, and a Pass with End has no next state', async () => {
    const choice = { Type: 'Choice', Choices: [{ Variable: '$.n', NumericGreaterThan: 10, Next: 'Big' }], Default: 'Small' };
    expect(await test({ definition: choice, input: '{"n":11}' })).toMatchObject({ status: 'SUCCEEDED', nextState: 'Big' });
    expect(await test({ definition: choice, input: '{"n":1}' })).toMatchObject({ status: 'SUCCEEDED', nextState: 'Small' });
    const end = await test({ definition: { Type: 'Pass', Result: { ok: true }, End: true } });
    expect(end).toMatchObject({ status: 'SUCCEEDED', output: '{"ok":true}' });
    expect(end.nextState).toBeUndefined();
    // A Wait does not hold the test up (its clock is virtual).
    expect(await test({ definition: { Type: 'Wait', Seconds: 3600, Next: 'After' } })).toMatchObject({
      status: 'SUCCEEDED',
      nextState: 'After',
    });
  });

  it('reports RETRIABLE for an error a retrier matches, CAUGHT_ERROR with the catcher, FAILED otherwise; never retries', async () => {
    calls = 0;
    const base = { Type: 'Task', Resource: `${FN}boom`, Next: 'Done' };
    const retried = await test({ definition: { ...base, Retry: [{ ErrorEquals: ['ModelDown'], MaxAttempts: 5 }] } });
    expect(retried).toMatchObject({ status: 'RETRIABLE', error: 'ModelDown', cause: expect.stringContaining('the model is down') });
    expect(calls).toBe(1);
    const caught = await test({
      definition: { ...base, Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.err', Next: 'Recover' }] },
      input: '{"k":1}',
    });
    expect(caught).toMatchObject({ status: 'CAUGHT_ERROR', error: 'ModelDown', nextState: 'Recover' });
    expect(JSON.parse(caught.output!)).toMatchObject({ k: 1, err: { Error: 'ModelDown' } });
    expect(await test({ definition: base })).toMatchObject({ status: 'FAILED', error: 'ModelDown' });
    expect(await test({ definition: { Type: 'Fail', Error: 'Bad', Cause: 'input was bad' } })).toMatchObject({
      status: 'FAILED',
      error: 'Bad',
      cause: 'input was bad',
    });
  });

  it('tests a state of a whole definition by stateName, with variables', async () => {
    const machine = {
      QueryLanguage: 'JSONata',
      StartAt: 'First',
      States: {
        First: { Type: 'Pass', Next: 'Greet' },
        Greet: { Type: 'Pass', Output: '{% $greeting & ", " & $states.input.who %}', Next: 'First' },
      },
    };
    const out = await test({
      definition: machine,
      stateName: 'Greet',
      input: '{"who":"Ada"}',
      variables: JSON.stringify({ greeting: 'Hello' }),
    });
    expect(out).toMatchObject({ status: 'SUCCEEDED', output: '"Hello, Ada"', nextState: 'First' });
  });

  it('refuses what it cannot test, with the API error names', async () => {
    expect(
      await sdkError(test({ definition: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken', End: true } })),
    ).toMatchObject({ name: 'ValidationException', message: expect.stringContaining('.waitForTaskToken') });
    expect(await sdkError(test({ definition: { Type: 'Teleport', End: true } }))).toMatchObject({
      name: 'InvalidDefinition',
      message: expect.stringContaining('"Teleport"'),
    });
    expect(
      await sdkError(test({ definition: { StartAt: 'A', States: { A: { Type: 'Pass', End: true } } }, stateName: 'B' })),
    ).toMatchObject({ name: 'ValidationException', message: expect.stringContaining('its states: A') });
    expect(await sdkError(test({ definition: { Type: 'Pass', End: true }, input: '{nope' }))).toMatchObject({
      name: 'InvalidExecutionInput',
    });
    // A function nobody registered fails the task, as a missing function does on AWS.
    expect(await test({ definition: { Type: 'Task', Resource: `${FN}missing`, End: true } })).toMatchObject({
      status: 'FAILED',
      error: expect.stringMatching(/^Lambda\./),
    });
    expect(await sdkError(test({ definition: { Type: 'Pass', Next: 'X', End: true } }))).toMatchObject({ name: 'InvalidDefinition' });
    expect(await sdkError(test({ definition: { Type: 'Pass', End: true }, mock: { result: '{}' } }))).toMatchObject({
      name: 'ValidationException',
      message: expect.stringContaining("does not take 'mock'"),
    });
    expect(await sdkError(test({ definition: { Type: 'Pass', End: true }, variables: JSON.stringify({ 'bad-name': 1 }) }))).toMatchObject({
      name: 'ValidationException',
      message: expect.stringContaining("'bad-name' is not a variable name"),
    });
  });
});
