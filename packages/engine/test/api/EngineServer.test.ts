import {
  CreateStateMachineCommand,
  DeleteStateMachineCommand,
  DescribeExecutionCommand,
  DescribeStateMachineCommand,
  DescribeStateMachineForExecutionCommand,
  ValidateStateMachineDefinitionCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  ListStateMachinesCommand,
  RedriveExecutionCommand,
  SendTaskFailureCommand,
  SendTaskHeartbeatCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
  StartSyncExecutionCommand,
  StopExecutionCommand,
  UpdateStateMachineCommand,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngineServer, type EngineServer } from '@stepforge/engine';
import { eventually, sdkError, sfnClient, waitForStatus } from './helpers.js';

const ROLE = 'arn:aws:iam::123456789012:role/test';

/** Tokens handed to `lambda:invoke.waitForTaskToken` handlers, by step name. */
const tokens: Record<string, string[]> = {};
const calls: Record<string, number> = {};
let flaky = true;

const handlers = {
  async double(e: unknown) {
    calls.double = (calls.double ?? 0) + 1;
    return { n: (e as { n: number }).n * 2 };
  },
  async capture(e: unknown) {
    const { step, token } = e as { step: string; token: string };
    (tokens[step] ??= []).push(token);
    return { captured: true };
  },
  async flakyStep(e: unknown) {
    calls.flaky = (calls.flaky ?? 0) + 1;
    if (flaky) {
      const err = new Error('not yet');
      err.name = 'NotYet';
      throw err;
    }
    return { ok: true, input: e };
  },
};

const PASS_CHAIN = JSON.stringify({
  StartAt: 'A',
  States: {
    A: { Type: 'Pass', Result: 1, ResultPath: '$.a', Next: 'B' },
    B: { Type: 'Pass', Result: 2, ResultPath: '$.b', Next: 'C' },
    C: {
      Type: 'Task',
      Resource: 'arn:aws:lambda:us-east-1:123456789012:function:double',
      Parameters: { 'n.$': '$.n' },
      ResultPath: '$.c',
      End: true,
    },
  },
});

const WAIT_FOR_TOKEN = (step: string) =>
  JSON.stringify({
    StartAt: 'Wait',
    States: {
      Wait: {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
        Parameters: { FunctionName: 'capture', Payload: { step, 'token.$': '$$.Task.Token' } },
        HeartbeatSeconds: 30,
        End: true,
      },
    },
  });

describe('Function: startEngineServer', () => {
  let server: EngineServer;
  let sfn: SFNClient;

  beforeAll(async () => {
    server = await startEngineServer({ handlers });
    sfn = sfnClient(server.url);
  });
  afterAll(async () => {
    sfn.destroy();
    await server.close();
  });

  async function machine(name: string, definition: string, type: 'STANDARD' | 'EXPRESS' = 'STANDARD'): Promise<string> {
    const r = await sfn.send(new CreateStateMachineCommand({ name, definition, roleArn: ROLE, type }));
    return r.stateMachineArn!;
  }

  it('serves on 127.0.0.1 with a free port', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.port).toBeGreaterThan(0);
  });

  describe('state machines', () => {
    it('creates, describes, lists, updates and deletes a state machine', async () => {
      const created = await sfn.send(new CreateStateMachineCommand({ name: 'crud', definition: PASS_CHAIN, roleArn: ROLE }));
      expect(created.stateMachineArn).toBe('arn:aws:states:us-east-1:123456789012:stateMachine:crud');
      expect(created.creationDate).toBeInstanceOf(Date);

      const d = await sfn.send(new DescribeStateMachineCommand({ stateMachineArn: created.stateMachineArn }));
      expect(d).toMatchObject({ name: 'crud', status: 'ACTIVE', type: 'STANDARD', definition: PASS_CHAIN, roleArn: ROLE });

      // Same request again is idempotent; a different definition under the same name is refused.
      const again = await sfn.send(new CreateStateMachineCommand({ name: 'crud', definition: PASS_CHAIN, roleArn: ROLE }));
      expect(again.stateMachineArn).toBe(created.stateMachineArn);
      const clash = await sdkError(
        sfn.send(new CreateStateMachineCommand({ name: 'crud', definition: WAIT_FOR_TOKEN('x'), roleArn: ROLE })),
      );
      expect(clash.name).toBe('StateMachineAlreadyExists');

      const list = await sfn.send(new ListStateMachinesCommand({}));
      expect(list.stateMachines?.map((m) => m.name)).toContain('crud');

      const newDef = JSON.stringify({ StartAt: 'P', States: { P: { Type: 'Pass', End: true } } });
      const upd = await sfn.send(new UpdateStateMachineCommand({ stateMachineArn: created.stateMachineArn, definition: newDef }));
      expect(upd.updateDate).toBeInstanceOf(Date);
      expect((await sfn.send(new DescribeStateMachineCommand({ stateMachineArn: created.stateMachineArn }))).definition).toBe(newDef);

      await sfn.send(new DeleteStateMachineCommand({ stateMachineArn: created.stateMachineArn }));
      const gone = await sdkError(sfn.send(new DescribeStateMachineCommand({ stateMachineArn: created.stateMachineArn })));
      expect(gone).toEqual({ name: 'StateMachineDoesNotExist', message: `State Machine Does Not Exist: '${created.stateMachineArn}'` });
    });

    it('pages ListStateMachines with nextToken', async () => {
      for (const n of ['page-1', 'page-2', 'page-3']) await machine(n, PASS_CHAIN);
      const seen: string[] = [];
      let nextToken: string | undefined;
      let pages = 0;
      do {
        const r = await sfn.send(new ListStateMachinesCommand({ maxResults: 2, nextToken }));
        expect(r.stateMachines!.length).toBeLessThanOrEqual(2);
        seen.push(...r.stateMachines!.map((m) => m.name!));
        nextToken = r.nextToken;
        pages++;
      } while (nextToken);
      expect(pages).toBeGreaterThanOrEqual(2);
      expect(seen).toEqual(expect.arrayContaining(['page-1', 'page-2', 'page-3']));
      expect(new Set(seen).size).toBe(seen.length);
    });

    it('rejects bad definitions with InvalidDefinition and the reason', async () => {
      const notJson = await sdkError(sfn.send(new CreateStateMachineCommand({ name: 'bad1', definition: '{"StartAt":', roleArn: ROLE })));
      expect(notJson.name).toBe('InvalidDefinition');
      expect(notJson.message).toContain('INVALID_JSON_DESCRIPTION');

      const missing = await sdkError(
        sfn.send(
          new CreateStateMachineCommand({
            name: 'bad2',
            definition: JSON.stringify({ StartAt: 'Nope', States: { A: { Type: 'Pass', End: true } } }),
            roleArn: ROLE,
          }),
        ),
      );
      expect(missing.name).toBe('InvalidDefinition');
      expect(missing.message).toMatch(/Nope/);

      const unsupported = await sdkError(
        sfn.send(
          new CreateStateMachineCommand({
            name: 'bad3',
            definition: JSON.stringify({
              StartAt: 'T',
              States: { T: { Type: 'Task', Resource: 'arn:aws:states:::ecs:runTask.sync', End: true } },
            }),
            roleArn: ROLE,
          }),
        ),
      );
      expect(unsupported.name).toBe('InvalidDefinition');
      expect(unsupported.message).toContain("Resource 'arn:aws:states:::ecs:runTask.sync' is not supported by the embedded engine");
      expect(unsupported.message).toContain('/States/T/Resource');
    });

    it('validates definitions without creating them (ValidateStateMachineDefinition)', async () => {
      const ok = await sfn.send(new ValidateStateMachineDefinitionCommand({ definition: PASS_CHAIN }));
      expect(ok).toMatchObject({ result: 'OK', diagnostics: [] });
      const bad = await sfn.send(
        new ValidateStateMachineDefinitionCommand({
          definition: JSON.stringify({
            StartAt: 'T',
            States: { T: { Type: 'Task', Resource: 'arn:aws:states:::glue:startJobRun', End: true } },
          }),
        }),
      );
      expect(bad.result).toBe('FAIL');
      expect(bad.diagnostics![0]).toMatchObject({ severity: 'ERROR', code: 'SCHEMA_VALIDATION_FAILED', location: '/States/T/Resource' });
      expect(bad.diagnostics![0]!.message).toContain("Resource 'arn:aws:states:::glue:startJobRun' is not supported");
    });

    it('rejects bad names, ARNs and types with the AWS error codes', async () => {
      expect(
        (await sdkError(sfn.send(new CreateStateMachineCommand({ name: 'has space', definition: PASS_CHAIN, roleArn: ROLE })))).name,
      ).toBe('InvalidName');
      expect((await sdkError(sfn.send(new DescribeStateMachineCommand({ stateMachineArn: 'not-an-arn' })))).name).toBe('InvalidArn');
      expect(
        (await sdkError(sfn.send(new DescribeExecutionCommand({ executionArn: 'arn:aws:states:us-east-1:123456789012:stateMachine:x' }))))
          .name,
      ).toBe('InvalidArn');
      const badType = await sdkError(
        sfn.send(new CreateStateMachineCommand({ name: 'typed', definition: PASS_CHAIN, roleArn: ROLE, type: 'BATCH' as never })),
      );
      expect(badType.name).toBe('ValidationException');
      expect(badType.message).toContain("Value 'BATCH' at 'type'");
    });
  });

  describe('executions', () => {
    it('runs a Standard execution and reports output, listing and history', async () => {
      const arn = await machine('exec-basic', PASS_CHAIN);
      const started = await sfn.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'run-1', input: '{"n":21}' }));
      expect(started.executionArn).toBe('arn:aws:states:us-east-1:123456789012:execution:exec-basic:run-1');
      const done = await waitForStatus(sfn, started.executionArn!);
      expect(done.status).toBe('SUCCEEDED');
      expect(JSON.parse(done.output!)).toEqual({ n: 21, a: 1, b: 2, c: { n: 42 } });
      expect(done.stopDate!.getTime()).toBeGreaterThanOrEqual(done.startDate!.getTime());

      const list = await sfn.send(new ListExecutionsCommand({ stateMachineArn: arn, statusFilter: 'SUCCEEDED' }));
      expect(list.executions!.map((e) => e.name)).toEqual(['run-1']);

      const all = await sfn.send(new GetExecutionHistoryCommand({ executionArn: started.executionArn }));
      const types = all.events!.map((e) => e.type);
      expect(types[0]).toBe('ExecutionStarted');
      expect(types.at(-1)).toBe('ExecutionSucceeded');
      expect(types).toContain('LambdaFunctionSucceeded');
      expect(all.events!.map((e) => e.id)).toEqual(all.events!.map((_, i) => i + 1));
      expect(all.events![0]!.timestamp).toBeInstanceOf(Date);

      // Paging and reverse order see the same events.
      const paged: number[] = [];
      let nextToken: string | undefined;
      do {
        const p = await sfn.send(new GetExecutionHistoryCommand({ executionArn: started.executionArn, maxResults: 3, nextToken }));
        paged.push(...p.events!.map((e) => e.id!));
        nextToken = p.nextToken;
      } while (nextToken);
      expect(paged).toEqual(all.events!.map((e) => e.id));
      const reversed = await sfn.send(
        new GetExecutionHistoryCommand({ executionArn: started.executionArn, reverseOrder: true, maxResults: 2 }),
      );
      expect(reversed.events!.map((e) => e.type)).toEqual(['ExecutionSucceeded', types.at(-2)]);

      const noData = await sfn.send(
        new GetExecutionHistoryCommand({ executionArn: started.executionArn, includeExecutionData: false, maxResults: 1 }),
      );
      expect(noData.events![0]!.executionStartedEventDetails?.input).toBeUndefined();

      const badToken = await sdkError(
        sfn.send(new GetExecutionHistoryCommand({ executionArn: started.executionArn, nextToken: 'garbage' })),
      );
      expect(badToken.name).toBe('InvalidToken');
    });

    it('describes the state machine an execution ran, even after an update (DescribeStateMachineForExecution)', async () => {
      const arn = await machine('for-exec', PASS_CHAIN);
      const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn: arn, input: '{"n":1}' }));
      await waitForStatus(sfn, executionArn!);
      const newDef = JSON.stringify({ StartAt: 'P', States: { P: { Type: 'Pass', End: true } } });
      await sfn.send(new UpdateStateMachineCommand({ stateMachineArn: arn, definition: newDef }));
      const d = await sfn.send(new DescribeStateMachineForExecutionCommand({ executionArn }));
      expect(d).toMatchObject({ stateMachineArn: arn, name: 'for-exec', definition: PASS_CHAIN, roleArn: ROLE });
    });

    it('treats the same name and input while RUNNING as the same execution, otherwise ExecutionAlreadyExists', async () => {
      const arn = await machine('idem', WAIT_FOR_TOKEN('idem'));
      const a = await sfn.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'once', input: '{"k":1}' }));
      const b = await sfn.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'once', input: '{"k":1}' }));
      expect(b.executionArn).toBe(a.executionArn);
      expect(b.startDate!.getTime()).toBe(a.startDate!.getTime());
      const other = await sdkError(sfn.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'once', input: '{"k":2}' })));
      expect(other).toEqual({ name: 'ExecutionAlreadyExists', message: `Execution Already Exists: '${a.executionArn}'` });

      await eventually(() => (tokens.idem?.length ?? 0) === 1);
      await sfn.send(new SendTaskSuccessCommand({ taskToken: tokens.idem![0]!, output: '{"done":true}' }));
      expect((await waitForStatus(sfn, a.executionArn!)).status).toBe('SUCCEEDED');
      const closed = await sdkError(sfn.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'once', input: '{"k":1}' })));
      expect(closed.name).toBe('ExecutionAlreadyExists');
    });

    it('rejects unknown executions and bad input with named errors', async () => {
      const arn = await machine('errs', PASS_CHAIN);
      const missing = 'arn:aws:states:us-east-1:123456789012:execution:errs:nope';
      expect(await sdkError(sfn.send(new DescribeExecutionCommand({ executionArn: missing })))).toEqual({
        name: 'ExecutionDoesNotExist',
        message: `Execution Does Not Exist: '${missing}'`,
      });
      expect((await sdkError(sfn.send(new StartExecutionCommand({ stateMachineArn: arn, input: '{not json' })))).name).toBe(
        'InvalidExecutionInput',
      );
      expect((await sdkError(sfn.send(new StartExecutionCommand({ stateMachineArn: arn, name: 'a/b' })))).name).toBe('InvalidName');
      const noSm = arn.replace(':errs', ':does-not-exist');
      expect((await sdkError(sfn.send(new StartExecutionCommand({ stateMachineArn: noSm })))).name).toBe('StateMachineDoesNotExist');
      expect((await sdkError(sfn.send(new ListExecutionsCommand({ stateMachineArn: noSm })))).name).toBe('StateMachineDoesNotExist');
    });

    it('runs Express state machines with StartSyncExecution and refuses it for Standard', async () => {
      const express = await machine('sync-express', PASS_CHAIN, 'EXPRESS');
      const r = await sfn.send(new StartSyncExecutionCommand({ stateMachineArn: express, input: '{"n":5}', name: 'sync-1' }));
      expect(r.status).toBe('SUCCEEDED');
      expect(JSON.parse(r.output!)).toEqual({ n: 5, a: 1, b: 2, c: { n: 10 } });
      expect(r.executionArn).toMatch(/^arn:aws:states:us-east-1:123456789012:express:sync-express:sync-1:[0-9a-f-]{36}$/);
      expect(r.billingDetails?.billedDurationInMilliseconds).toBeGreaterThanOrEqual(100);

      const failing = await machine(
        'sync-fail',
        JSON.stringify({ StartAt: 'F', States: { F: { Type: 'Fail', Error: 'Oops', Cause: 'because' } } }),
        'EXPRESS',
      );
      const f = await sfn.send(new StartSyncExecutionCommand({ stateMachineArn: failing }));
      expect(f).toMatchObject({ status: 'FAILED', error: 'Oops', cause: 'because' });

      const standard = await machine('sync-standard', PASS_CHAIN);
      expect((await sdkError(sfn.send(new StartSyncExecutionCommand({ stateMachineArn: standard })))).name).toBe(
        'StateMachineTypeNotSupported',
      );
    });
  });

  describe('task tokens', () => {
    it('completes .waitForTaskToken with SendTaskHeartbeat and SendTaskSuccess', async () => {
      const arn = await machine('token-ok', WAIT_FOR_TOKEN('ok'));
      const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn: arn, input: '{}' }));
      await eventually(() => (tokens.ok?.length ?? 0) === 1);
      const token = tokens.ok![0]!;
      await sfn.send(new SendTaskHeartbeatCommand({ taskToken: token }));
      expect((await sfn.send(new DescribeExecutionCommand({ executionArn }))).status).toBe('RUNNING');
      await sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: '{"answer":42}' }));
      const done = await waitForStatus(sfn, executionArn!);
      expect(done.status).toBe('SUCCEEDED');
      expect(JSON.parse(done.output!)).toEqual({ answer: 42 });
      const history = await sfn.send(new GetExecutionHistoryCommand({ executionArn }));
      const submitted = history.events!.find((e) => e.type === 'TaskSubmitted');
      expect(submitted?.taskSubmittedEventDetails).toMatchObject({ resource: 'invoke.waitForTaskToken', resourceType: 'lambda' });
      // The token is spent: a second completion is too late.
      expect((await sdkError(sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: '{}' })))).name).toBe('TaskTimedOut');
    });

    it('fails the task with SendTaskFailure and refuses unknown tokens', async () => {
      const arn = await machine('token-fail', WAIT_FOR_TOKEN('fail'));
      const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn: arn }));
      await eventually(() => (tokens.fail?.length ?? 0) === 1);
      await sfn.send(new SendTaskFailureCommand({ taskToken: tokens.fail![0]!, error: 'Rejected', cause: 'a human said no' }));
      const done = await waitForStatus(sfn, executionArn!);
      expect(done).toMatchObject({ status: 'FAILED', error: 'Rejected', cause: 'a human said no' });
      expect((await sdkError(sfn.send(new SendTaskSuccessCommand({ taskToken: 'no-such-token', output: '{}' })))).name).toBe(
        'TaskDoesNotExist',
      );
      expect((await sdkError(sfn.send(new SendTaskHeartbeatCommand({ taskToken: 'no-such-token' })))).name).toBe('TaskDoesNotExist');
    });

    it('refuses SendTaskSuccess output that is not JSON', async () => {
      const arn = await machine('token-badout', WAIT_FOR_TOKEN('badout'));
      const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn: arn }));
      await eventually(() => (tokens.badout?.length ?? 0) === 1);
      expect((await sdkError(sfn.send(new SendTaskSuccessCommand({ taskToken: tokens.badout![0]!, output: 'nope' })))).name).toBe(
        'InvalidOutput',
      );
      await sfn.send(new StopExecutionCommand({ executionArn }));
    });
  });

  describe('stop and redrive', () => {
    it('stops a running execution (ABORTED, with the given error and cause)', async () => {
      const arn = await machine('stop-me', WAIT_FOR_TOKEN('stop'));
      const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn: arn }));
      await eventually(() => (tokens.stop?.length ?? 0) === 1);
      const stopped = await sfn.send(new StopExecutionCommand({ executionArn, error: 'Manual', cause: 'test stop' }));
      expect(stopped.stopDate).toBeInstanceOf(Date);
      const d = await sfn.send(new DescribeExecutionCommand({ executionArn }));
      expect(d).toMatchObject({ status: 'ABORTED', error: 'Manual', cause: 'test stop' });
      const h = await sfn.send(new GetExecutionHistoryCommand({ executionArn, reverseOrder: true, maxResults: 1 }));
      expect(h.events![0]!.type).toBe('ExecutionAborted');
      // The token died with the execution.
      expect((await sdkError(sfn.send(new SendTaskSuccessCommand({ taskToken: tokens.stop![0]!, output: '{}' })))).name).toBe(
        'TaskTimedOut',
      );
    });

    it('redrives a failed execution from the failed state only', async () => {
      const def = JSON.stringify({
        StartAt: 'First',
        States: {
          First: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:double', Next: 'Second' },
          Second: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:flakyStep', End: true },
        },
      });
      const arn = await machine('redrive', def);
      flaky = true;
      calls.double = 0;
      calls.flaky = 0;
      const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn: arn, input: '{"n":3}' }));
      const failed = await waitForStatus(sfn, executionArn!);
      expect(failed).toMatchObject({ status: 'FAILED', error: 'NotYet', redriveStatus: 'REDRIVABLE' });
      expect(calls).toMatchObject({ double: 1, flaky: 1 });

      flaky = false;
      const r = await sfn.send(new RedriveExecutionCommand({ executionArn }));
      expect(r.redriveDate).toBeInstanceOf(Date);
      const done = await waitForStatus(sfn, executionArn!);
      expect(done.status).toBe('SUCCEEDED');
      expect(done.redriveCount).toBe(1);
      expect(JSON.parse(done.output!)).toEqual({ ok: true, input: { n: 6 } });
      expect(calls).toMatchObject({ double: 1, flaky: 2 }); // First was not re-run
      const types = (await sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000 }))).events!.map((e) => e.type);
      expect(types).toContain('ExecutionFailed');
      expect(types).toContain('ExecutionRedriven');
      expect(types.at(-1)).toBe('ExecutionSucceeded');

      const again = await sdkError(sfn.send(new RedriveExecutionCommand({ executionArn })));
      expect(again.name).toBe('ExecutionNotRedrivable');
      expect(again.message).toContain('SUCCEEDED');
    });
  });

  describe('child executions', () => {
    it('runs states:startExecution.sync:2 and returns the child output as JSON', async () => {
      const child = await machine('child', PASS_CHAIN);
      const parentDef = JSON.stringify({
        StartAt: 'Child',
        States: {
          Child: {
            Type: 'Task',
            Resource: 'arn:aws:states:::states:startExecution.sync:2',
            Parameters: { StateMachineArn: child, Input: { 'n.$': '$.n' }, Name: 'child-of-parent' },
            OutputPath: '$.Output',
            End: true,
          },
        },
      });
      const parent = await machine('parent', parentDef);
      const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn: parent, input: '{"n":4}' }));
      const done = await waitForStatus(sfn, executionArn!);
      expect(done.status).toBe('SUCCEEDED');
      expect(JSON.parse(done.output!)).toEqual({ n: 4, a: 1, b: 2, c: { n: 8 } });
      const kids = await sfn.send(new ListExecutionsCommand({ stateMachineArn: child }));
      expect(kids.executions!.map((e) => e.name)).toEqual(['child-of-parent']);
    });

    it('fails the parent with States.TaskFailed when the .sync child fails', async () => {
      const child = await machine(
        'child-fails',
        JSON.stringify({ StartAt: 'F', States: { F: { Type: 'Fail', Error: 'ChildErr', Cause: 'child cause' } } }),
      );
      const parent = await machine(
        'parent-of-failing',
        JSON.stringify({
          StartAt: 'C',
          States: {
            C: { Type: 'Task', Resource: 'arn:aws:states:::states:startExecution.sync', Parameters: { StateMachineArn: child }, End: true },
          },
        }),
      );
      const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn: parent }));
      const done = await waitForStatus(sfn, executionArn!);
      expect(done.status).toBe('FAILED');
      expect(done.error).toBe('States.TaskFailed');
      expect(JSON.parse(done.cause!)).toMatchObject({ Status: 'FAILED', Error: 'ChildErr', Cause: 'child cause' });
    });

    it('names a refused child start as AWS names the integration error (StepFunctions.<Exception>)', async () => {
      const child = await machine('child-named', PASS_CHAIN);
      // The second start reuses the name of a closed execution with other input: the service refuses it.
      const start = (n: number) => ({
        Type: 'Task',
        Resource: 'arn:aws:states:::states:startExecution.sync:2',
        Parameters: { StateMachineArn: child, Input: { n }, Name: 'same-name' },
      });
      const parent = await machine(
        'parent-twice',
        JSON.stringify({
          StartAt: 'First',
          States: { First: { ...start(1), ResultPath: null, Next: 'Second' }, Second: { ...start(2), End: true } },
        }),
      );
      const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn: parent }));
      const done = await waitForStatus(sfn, executionArn!);
      expect(done.status).toBe('FAILED');
      expect(done.error).toBe('StepFunctions.ExecutionAlreadyExistsException');
      expect(done.cause).toMatch(/\(Service: AWSStepFunctions; Status Code: 400; Error Code: ExecutionAlreadyExists; Proxy: null\)$/);
    });
  });
});
