import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  RedriveExecutionCommand,
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  DescribeStateMachineCommand,
  GetExecutionHistoryCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirectoryExecutionStore, startEngineServer } from '@stepforge/engine';
import { eventually, sfnClient, waitForStatus } from './helpers.js';

const DEFINITION = JSON.stringify({
  StartAt: 'Prepare',
  States: {
    Prepare: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:prepare', Next: 'Approve' },
    Approve: {
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
      Parameters: { FunctionName: 'ask', Payload: { 'token.$': '$$.Task.Token', 'order.$': '$.order' } },
      ResultPath: '$.approval',
      Next: 'Done',
    },
    Done: { Type: 'Pass', End: true },
  },
});

describe('Function: startEngineServer (restart)', () => {
  let dataDir: string;
  let prepared = 0;
  let asked: string[] = [];
  let askFails = false;
  const handlers = {
    prepare: async (e: unknown) => {
      prepared++;
      return { order: (e as { id: string }).id };
    },
    ask: async (e: unknown) => {
      if (askFails) throw Object.assign(new Error('approval service down'), { name: 'ServiceDown' });
      asked.push((e as { token: string }).token);
      return {};
    },
  };

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'stepforge-engine-'));
    prepared = 0;
    asked = [];
    askFails = false;
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('resumes an unfinished Standard execution from its last completed transition', async () => {
    const first = await startEngineServer({ dataDir, handlers });
    const sfn1 = sfnClient(first.url);
    const { stateMachineArn } = await sfn1.send(
      new CreateStateMachineCommand({ name: 'approval', definition: DEFINITION, roleArn: 'arn:aws:iam::123456789012:role/r' }),
    );
    const { executionArn } = await sfn1.send(new StartExecutionCommand({ stateMachineArn, name: 'order-7', input: '{"id":"o-7"}' }));
    await eventually(() => asked.length === 1);
    const before = (await sfn1.send(new GetExecutionHistoryCommand({ executionArn }))).events!.map((e) => e.type);
    sfn1.destroy();
    await first.close(); // the process "dies" with the execution waiting for approval

    const second = await startEngineServer({ dataDir, handlers });
    const sfn2 = sfnClient(second.url);
    try {
      expect(second.resumed).toBe(1);
      expect((await sfn2.send(new DescribeStateMachineCommand({ stateMachineArn }))).definition).toBe(DEFINITION);
      expect((await sfn2.send(new DescribeExecutionCommand({ executionArn }))).status).toBe('RUNNING');
      // Resumed at the Approve state: Prepare is not repeated, the approval request is re-sent with the same token.
      await eventually(() => asked.length === 2);
      expect(prepared).toBe(1);
      expect(asked[1]).toBe(asked[0]);
      await sfn2.send(new SendTaskSuccessCommand({ taskToken: asked[0]!, output: '{"approved":true}' }));
      const done = await waitForStatus(sfn2, executionArn!);
      expect(done.status).toBe('SUCCEEDED');
      expect(JSON.parse(done.output!)).toEqual({ order: 'o-7', approval: { approved: true } });

      const events = (await sfn2.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000 }))).events!;
      expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
      const types = events.map((e) => e.type);
      expect(types.filter((t) => t === 'ExecutionStarted')).toHaveLength(1);
      expect(types.filter((t) => t === 'LambdaFunctionScheduled')).toHaveLength(1);
      expect(types.slice(0, before.indexOf('TaskStateEntered', before.indexOf('TaskStateExited')))).toEqual(
        before.slice(0, before.indexOf('TaskStateEntered', before.indexOf('TaskStateExited'))),
      );
      expect(types.at(-1)).toBe('ExecutionSucceeded');
    } finally {
      sfn2.destroy();
      await second.close();
    }
  });

  it('waits for resumeUnfinished() when started with resumeOnStart: false', async () => {
    const first = await startEngineServer({ dataDir, handlers });
    const sfn1 = sfnClient(first.url);
    const { stateMachineArn } = await sfn1.send(
      new CreateStateMachineCommand({ name: 'later', definition: DEFINITION, roleArn: 'arn:aws:iam::123456789012:role/r' }),
    );
    const { executionArn } = await sfn1.send(new StartExecutionCommand({ stateMachineArn, input: '{"id":"o-9"}' }));
    await eventually(() => asked.length === 1);
    sfn1.destroy();
    await first.close();

    const second = await startEngineServer({ dataDir, handlers, resumeOnStart: false });
    const sfn2 = sfnClient(second.url);
    try {
      expect(second.resumed).toBe(0);
      await new Promise((r) => setTimeout(r, 50));
      expect(asked).toHaveLength(1); // nothing ran yet
      expect((await sfn2.send(new DescribeExecutionCommand({ executionArn }))).status).toBe('RUNNING');
      expect(second.resumeUnfinished()).toBe(1);
      expect(second.resumeUnfinished()).toBe(0); // already running
      await eventually(() => asked.length === 2);
      await sfn2.send(new SendTaskSuccessCommand({ taskToken: asked[1]!, output: '{"approved":false}' }));
      expect((await waitForStatus(sfn2, executionArn!)).status).toBe('SUCCEEDED');
      expect(prepared).toBe(1);
    } finally {
      sfn2.destroy();
      await second.close();
    }
  });

  it('resumes a redriven execution after a restart without losing its ExecutionRedriven event', async () => {
    askFails = true;
    const first = await startEngineServer({ dataDir, handlers });
    const sfn1 = sfnClient(first.url);
    const { stateMachineArn } = await sfn1.send(
      new CreateStateMachineCommand({ name: 'redrive-restart', definition: DEFINITION, roleArn: 'arn:aws:iam::123456789012:role/r' }),
    );
    const { executionArn } = await sfn1.send(new StartExecutionCommand({ stateMachineArn, input: '{"id":"o-3"}' }));
    expect(await waitForStatus(sfn1, executionArn!)).toMatchObject({ status: 'FAILED', error: 'ServiceDown' });
    askFails = false;
    await sfn1.send(new RedriveExecutionCommand({ executionArn }));
    await eventually(() => asked.length === 1);
    sfn1.destroy();
    await first.close();

    const second = await startEngineServer({ dataDir, handlers });
    const sfn2 = sfnClient(second.url);
    try {
      expect(second.resumed).toBe(1);
      await eventually(() => asked.length === 2);
      await sfn2.send(new SendTaskSuccessCommand({ taskToken: asked[1]!, output: '{"approved":true}' }));
      const done = await waitForStatus(sfn2, executionArn!);
      expect(done).toMatchObject({ status: 'SUCCEEDED', redriveCount: 1 });
      expect(prepared).toBe(1);
      const events = (await sfn2.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000 }))).events!;
      expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
      const types = events.map((e) => e.type);
      expect(types.filter((t) => t === 'ExecutionRedriven')).toHaveLength(1);
      expect(types.indexOf('ExecutionFailed')).toBeLessThan(types.indexOf('ExecutionRedriven'));
      expect(types.at(-1)).toBe('ExecutionSucceeded');
    } finally {
      sfn2.destroy();
      await second.close();
    }
  });

  it('stops a loaded execution that was not resumed, and can redrive it later', async () => {
    const first = await startEngineServer({ dataDir, handlers });
    const sfn1 = sfnClient(first.url);
    const { stateMachineArn } = await sfn1.send(
      new CreateStateMachineCommand({ name: 'dormant', definition: DEFINITION, roleArn: 'arn:aws:iam::123456789012:role/r' }),
    );
    const { executionArn } = await sfn1.send(new StartExecutionCommand({ stateMachineArn, input: '{"id":"o-5"}' }));
    await eventually(() => asked.length === 1);
    sfn1.destroy();
    await first.close();

    const second = await startEngineServer({ dataDir, handlers, resumeOnStart: false });
    const sfn2 = sfnClient(second.url);
    try {
      await sfn2.send(new StopExecutionCommand({ executionArn, error: 'Cancelled', cause: 'operator' }));
      expect(await sfn2.send(new DescribeExecutionCommand({ executionArn }))).toMatchObject({
        status: 'ABORTED',
        error: 'Cancelled',
        redriveStatus: 'REDRIVABLE',
      });
      const events = (await sfn2.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000 }))).events!;
      expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
      expect(events.at(-1)).toMatchObject({
        type: 'ExecutionAborted',
        executionAbortedEventDetails: { error: 'Cancelled', cause: 'operator' },
      });
      expect(second.resumeUnfinished()).toBe(0);

      await sfn2.send(new RedriveExecutionCommand({ executionArn }));
      await eventually(() => asked.length === 2);
      await sfn2.send(new SendTaskSuccessCommand({ taskToken: asked[1]!, output: '{"approved":true}' }));
      expect(await waitForStatus(sfn2, executionArn!)).toMatchObject({ status: 'SUCCEEDED', redriveCount: 1 });
      expect(prepared).toBe(1);
    } finally {
      sfn2.destroy();
      await second.close();
    }
  });

  it('keeps finished executions and their histories across restarts', async () => {
    const simple = JSON.stringify({ StartAt: 'P', States: { P: { Type: 'Pass', Result: 'x', End: true } } });
    const first = await startEngineServer({ dataDir });
    const sfn1 = sfnClient(first.url);
    const { stateMachineArn } = await sfn1.send(
      new CreateStateMachineCommand({ name: 'simple', definition: simple, roleArn: 'arn:aws:iam::123456789012:role/r' }),
    );
    const { executionArn } = await sfn1.send(new StartExecutionCommand({ stateMachineArn, name: 'e1' }));
    await waitForStatus(sfn1, executionArn!);
    const history = (await sfn1.send(new GetExecutionHistoryCommand({ executionArn }))).events!;
    sfn1.destroy();
    await first.close();

    const second = await startEngineServer({ dataDir });
    const sfn2 = sfnClient(second.url);
    try {
      expect(second.resumed).toBe(0);
      const d = await sfn2.send(new DescribeExecutionCommand({ executionArn }));
      expect(d).toMatchObject({ status: 'SUCCEEDED', output: '"x"' });
      const again = (await sfn2.send(new GetExecutionHistoryCommand({ executionArn }))).events!;
      expect(again.map((e) => [e.id, e.type])).toEqual(history.map((e) => [e.id, e.type]));
    } finally {
      sfn2.destroy();
      await second.close();
    }
  });
  it('checks a definition when it is stored, and runs a stored one without checking it again', async () => {
    // A definition this engine rejects (a field a Pass state may not have), as an earlier store could hold one.
    const lenient = JSON.stringify({ StartAt: 'P', States: { P: { Type: 'Pass', Result: { ok: true }, Extra: 1, End: true } } });
    const stateMachineArn = 'arn:aws:states:us-east-1:123456789012:stateMachine:stored';
    const roleArn = 'arn:aws:iam::123456789012:role/r';
    new DirectoryExecutionStore(dataDir).putStateMachine({
      stateMachineArn,
      name: 'stored',
      type: 'STANDARD',
      definition: lenient,
      roleArn,
      creationDate: 1,
      revisionId: 'r1',
    });
    const server = await startEngineServer({ dataDir, handlers });
    const sfn = sfnClient(server.url);
    try {
      await expect(sfn.send(new CreateStateMachineCommand({ name: 'fresh', definition: lenient, roleArn }))).rejects.toMatchObject({
        name: 'InvalidDefinition',
        message: expect.stringContaining('These fields are not allowed for a JSONPath Pass state: [Extra]'),
      });
      const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn, input: '{}' }));
      const done = await waitForStatus(sfn, executionArn!);
      expect(done.status).toBe('SUCCEEDED');
      expect(JSON.parse(done.output!)).toEqual({ ok: true });
    } finally {
      sfn.destroy();
      await server.close();
    }
  });
});
