// Human approval end to end on loopback: the embedded Step Functions API server runs a state
// that invokes the tool handler with `.waitForTaskToken`; the policy gates the call; the approval
// message (with the task token) lands on the fauxqs queue; approve / reject / timeout resolve it.
// Also the api and trigger handlers starting runs on the same server.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { startEngineServer, type EngineServer } from '@stepforge/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleApiEvent, type ApiEvent } from '../src/handlers/api.js';
import { createApprovalsHandler } from '../src/handlers/approvals.js';
import { createToolHandler } from '../src/handlers/tool.js';
import { createTriggerHandler } from '../src/handlers/trigger.js';
import type { Runtime } from '../src/runtime/Runtime.js';
import { sqsClient } from '../src/runtime/sqsClient.js';
import { envelope } from './envelope.js';
import { makeRuntime, startDynalite, type DynamoEndpoint, startSqs, type SqsEndpoint } from './emulators.js';

let ddb: DynamoEndpoint;
let sqs: SqsEndpoint;
let engine: EngineServer;
let rt: Runtime;
let sfn: SFNClient;
let queueUrl: string;
let gateArn: string;
let passArn: string;
let tool: ReturnType<typeof createToolHandler>;

const FN_ENV = () =>
  envelope({
    kind: 'tool',
    step: 'read_report',
    tools: ['fs-read'],
    toolCall: { id: 'c1', tool: 'fs-read', args: { path: 'report.txt' } },
  });

const FN = 'arn:aws:lambda:us-east-1:123456789012:function:ToolStepFunction';

beforeAll(async () => {
  [ddb, sqs] = await Promise.all([startDynalite(), startSqs()]);
  queueUrl = await sqs.createQueue('approvals');
  const root = mkdtempSync(join(tmpdir(), 'sf-appr-'));
  writeFileSync(join(root, 'report.txt'), 'quarterly numbers');
  const env = FN_ENV();
  engine = await startEngineServer({
    handlers: { ToolStepFunction: (e: unknown, c: unknown) => tool(e, c) },
    substitutions: { ToolStepFunctionArn: FN },
  });
  rt = await makeRuntime(ddb.endpoint, {
    endpoints: { sqs: sqs.endpoint, stepfunctions: engine.url },
    approvalQueueUrl: queueUrl,
    policyRules: [{ name: 'reads need a human', tool: 'fs-read', args: { path: '*.txt' }, action: 'approve' }],
    tools: {
      httpAllowHosts: [],
      fsRoot: root,
      fsMaxReadBytes: 10_000,
      shellEnabled: false,
      shellAllow: [],
      shellDeny: [],
      maxArgsBytes: 10_000,
    },
    stateMachineArnPrefix: 'arn:aws:states:us-east-1:123456789012:stateMachine:',
  });
  tool = createToolHandler(rt);
  sfn = new SFNClient({ region: 'us-east-1', endpoint: engine.url, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
  const gate = {
    QueryLanguage: 'JSONata',
    StartAt: 'ReadReport',
    States: {
      ReadReport: {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
        TimeoutSeconds: 300,
        Arguments: {
          FunctionName: '${ToolStepFunctionArn}',
          Payload: {
            ...env,
            run: { id: '{% $states.context.Execution.Name %}', workflow: 'gate' },
            taskToken: '{% $states.context.Task.Token %}',
          },
        },
        End: true,
      },
    },
  };
  gateArn = (
    await sfn.send(
      new CreateStateMachineCommand({ name: 'gate', definition: JSON.stringify(gate), roleArn: 'arn:aws:iam::123456789012:role/x' }),
    )
  ).stateMachineArn as string;
  const pass = { StartAt: 'P', States: { P: { Type: 'Pass', End: true } } };
  passArn = (
    await sfn.send(
      new CreateStateMachineCommand({ name: 'hello', definition: JSON.stringify(pass), roleArn: 'arn:aws:iam::123456789012:role/x' }),
    )
  ).stateMachineArn as string;
});
afterAll(async () => {
  await rt.close();
  sfn.destroy();
  await engine.close();
  await Promise.all([sqs.stop(), ddb.stop()]);
});

async function waitFor<T>(f: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function startGate(name: string): Promise<{ executionArn: string; approvalId: string; token: string }> {
  const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn: gateArn, name, input: '{}' }));
  const msg = await waitFor(async () => {
    const r = await sqsClient(rt).send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 1 }));
    return r.Messages?.[0];
  });
  const body = JSON.parse(msg.Body ?? '{}') as { approvalId: string; taskToken: string; tool: string; runId: string; args: unknown };
  expect(body).toMatchObject({ tool: 'fs-read', runId: name, args: { path: 'report.txt' } });
  return { executionArn: executionArn as string, approvalId: body.approvalId, token: body.taskToken };
}

async function finished(executionArn: string) {
  return waitFor(async () => {
    const d = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    return d.status === 'RUNNING' ? undefined : d;
  });
}

describe('Function: createApprovalsHandler', () => {
  it('pauses a gated call on an SQS approval message with the task token, and approve runs it', async () => {
    const { executionArn, approvalId, token } = await startGate('appr-1');
    expect(token.length).toBeGreaterThan(0);
    const approvals = createApprovalsHandler(rt);
    const listed = (await approvals({ action: 'list' })) as { approvals: { approvalId: string; tool: string }[] };
    expect(listed.approvals.map((a) => a.approvalId)).toContain(approvalId);
    const r = (await approvals({ action: 'approve', approvalId, by: 'alice' })) as { status: string };
    expect(r.status).toBe('APPROVED');
    const d = await finished(executionArn);
    expect(d.status).toBe('SUCCEEDED');
    expect(JSON.parse(d.output ?? '{}')).toMatchObject({ id: 'c1', tool: 'fs-read', result: { content: 'quarterly numbers' } });
    expect((await rt.runs.listEvents('appr-1')).map((e) => e.type)).toEqual(['ApprovalRequested', 'ApprovalGranted']);
  });

  it('fails the execution with ApprovalRejected on reject', async () => {
    const { executionArn, approvalId } = await startGate('appr-2');
    await createApprovalsHandler(rt)({ action: 'reject', approvalId, by: 'bob', reason: 'not today' });
    const d = await finished(executionArn);
    expect(d.status).toBe('FAILED');
    expect(d.error).toBe('ApprovalRejected');
    expect(d.cause).toBe(`approval ${approvalId} was rejected: not today`);
  });

  it('treats a timeout as a denial', async () => {
    const { executionArn, approvalId } = await startGate('appr-3');
    const late = await makeRuntimeAt(rt, Date.now() + 48 * 3600 * 1000);
    const r = (await createApprovalsHandler(late)({ action: 'expire' })) as { expired: string[] };
    expect(r.expired).toContain(approvalId);
    const d = await finished(executionArn);
    expect(d.error).toBe('ApprovalRejected');
    expect(d.cause).toBe(`approval ${approvalId} timed out (a timeout is a denial)`);
    expect((await rt.approvals.get(approvalId))?.status).toBe('TIMED_OUT');
  });

  // A resumed execution (or a retried invocation) dispatches the gated task again with the same
  // token, as the engine re-issues it: the payload the gate state sends, for execution `name`.
  const dispatchAgain = (name: string, token: string) => tool({ ...FN_ENV(), run: { id: name, workflow: 'gate' }, taskToken: token });
  const noMessage = async () =>
    (await sqsClient(rt).send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 1 }))).Messages ?? [];

  it('finds the pending approval again when the task is dispatched again with its token', async () => {
    const { executionArn, approvalId, token } = await startGate('appr-4');
    expect(await dispatchAgain('appr-4', token)).toEqual({ status: 'waiting_approval', approvalId });
    expect(await noMessage()).toEqual([]);
    expect((await rt.approvals.list('PENDING')).filter((a) => a.runId === 'appr-4').map((a) => a.approvalId)).toEqual([approvalId]);
    await createApprovalsHandler(rt)({ action: 'approve', approvalId, by: 'alice' });
    expect((await finished(executionArn)).status).toBe('SUCCEEDED');
    expect((await rt.runs.listEvents('appr-4')).map((e) => e.type)).toEqual(['ApprovalRequested', 'ApprovalGranted']);
  });

  it('announces a pending approval again when the process that recorded it ended before announcing it', async () => {
    const { executionArn, approvalId, token } = await startGate('appr-4b');
    // As the record stands when its requester ended between the put and the announcement.
    await rt.db.doc.send(
      new UpdateCommand({
        TableName: rt.db.tableName,
        Key: { pk: `APPROVAL#${approvalId}`, sk: 'APPROVAL' },
        UpdateExpression: 'REMOVE announcedAt',
      }),
    );
    expect(await dispatchAgain('appr-4b', token)).toEqual({ status: 'waiting_approval', approvalId });
    const [message, ...more] = await noMessage();
    expect(more).toEqual([]);
    expect(JSON.parse(message?.Body ?? '{}')).toMatchObject({ type: 'stepforge.approval', approvalId, runId: 'appr-4b', taskToken: token });
    // Announced now: a later dispatch announces nothing.
    expect(await dispatchAgain('appr-4b', token)).toEqual({ status: 'waiting_approval', approvalId });
    expect(await noMessage()).toEqual([]);
    await createApprovalsHandler(rt)({ action: 'approve', approvalId, by: 'alice' });
    expect((await finished(executionArn)).status).toBe('SUCCEEDED');
    expect((await rt.runs.listEvents('appr-4b')).map((e) => e.type)).toEqual(['ApprovalRequested', 'ApprovalRequested', 'ApprovalGranted']);
  });

  it('answers a decision again when the task asks after it (the first answer went to an engine that stopped)', async () => {
    const { executionArn, approvalId, token } = await startGate('appr-5');
    // Decided, but the answer never reached this execution (as when it went to a process that ended).
    await rt.approvals.decide(approvalId, { decision: 'APPROVED', by: 'alice' });
    expect(await dispatchAgain('appr-5', token)).toEqual({ status: 'waiting_approval', approvalId });
    const d = await finished(executionArn);
    expect(d.status).toBe('SUCCEEDED');
    expect(JSON.parse(d.output ?? '{}')).toMatchObject({ id: 'c1', tool: 'fs-read', result: { content: 'quarterly numbers' } });
    // The token is closed now: a later decider's answer is not an error, and the call is not run again.
    const late = await createApprovalsHandler(rt)({ action: 'approve', approvalId }).catch((e: unknown) => e);
    expect([(late as Error).name, (late as { code?: string }).code, (late as Error).message]).toEqual([
      'StepforgeError',
      'approval_decided',
      `approval '${approvalId}' was already decided: APPROVED`,
    ]);
    const [step] = await rt.runs.listSteps('appr-5');
    expect([step?.status, step?.attempts]).toEqual(['SUCCEEDED', 1]);
    expect(await dispatchAgain('appr-5', token)).toEqual({ status: 'waiting_approval', approvalId });
    // Nothing waits on the token any more, so the call is not made (nor its result reused) again.
    expect(await rt.runs.listSteps('appr-5')).toEqual([step]);
  });

  it('fails the token again for a rejection the execution never received', async () => {
    const { executionArn, approvalId, token } = await startGate('appr-6');
    await rt.approvals.decide(approvalId, { decision: 'REJECTED', by: 'bob', reason: 'not this one' });
    await dispatchAgain('appr-6', token);
    const d = await finished(executionArn);
    expect(d.error).toBe('ApprovalRejected');
    expect(d.cause).toBe(`approval ${approvalId} was rejected: not this one`);
  });

  it('does not make an approved call whose task no longer waits (the execution was stopped)', async () => {
    const { executionArn, approvalId } = await startGate('appr-8');
    await sfn.send(new StopExecutionCommand({ executionArn }));
    const r = (await createApprovalsHandler(rt)({ action: 'approve', approvalId, by: 'alice' })) as {
      status: string;
      delivered: boolean;
      result?: unknown;
    };
    expect(r).toEqual({ approvalId, status: 'APPROVED', delivered: false });
    // The call never ran: no step record for it.
    expect(await rt.runs.listSteps('appr-8')).toEqual([]);
  });

  it('keeps a decision that no execution waits for, and says it was not delivered', async () => {
    const { executionArn, approvalId } = await startGate('appr-7');
    await sfn.send(new StopExecutionCommand({ executionArn }));
    const r = (await createApprovalsHandler(rt)({ action: 'reject', approvalId, by: 'bob' })) as { status: string; delivered: boolean };
    expect(r).toMatchObject({ status: 'REJECTED', delivered: false });
    expect((await rt.approvals.get(approvalId))?.status).toBe('REJECTED');
  });

  it('rejects a misspelt command', async () => {
    const err = await createApprovalsHandler(rt)({ action: 'approve', approvalID: 'x' }).catch((e: unknown) => e);
    expect((err as Error).name).toBe('InvalidInput');
  });
});

async function makeRuntimeAt(base: Runtime, now: number): Promise<Runtime> {
  const { Runtime: R } = await import('../src/runtime/Runtime.js');
  return new R({ ...base.config, clock: () => now });
}

describe('Function: handleApiEvent (the HTTP API on AWS: the one router over the one run service)', () => {
  const api = async (e: ApiEvent) => {
    const r = await handleApiEvent(rt, e);
    return { status: r.statusCode, body: JSON.parse(r.body) as Record<string, any> };
  };
  // What a deployment records of its workflow in the runs table: its input schema, steps and edges.
  const hello = {
    name: 'hello',
    format: 'dsl',
    stateMachineArn: 'arn:aws:states:us-east-1:123456789012:stateMachine:hello',
    inputSchema: { fields: [{ name: 'x', type: 'number', required: false, hasDefault: false }] },
    steps: [{ id: 'P', kind: 'task', state: 'P', states: ['P'], lambda: false }],
    edges: [],
    updatedAt: '2026-01-01T00:00:00.000Z',
    version: 'v1',
  };
  beforeAll(async () => {
    await rt.workflows.put('hello', 'v1', hello);
  });

  it('starts a run once per idempotency key and shows it, as stepforge serve does', async () => {
    const post: ApiEvent = {
      httpMethod: 'POST',
      path: '/workflows/hello/runs',
      headers: { 'Idempotency-Key': 'api-key-1' },
      body: JSON.stringify({ input: { x: 1 } }),
    };
    const first = await api(post);
    expect(first).toEqual({ status: 202, body: { runId: expect.any(String), status: 'RUNNING', reused: false } });
    const runId = first.body.runId as string;
    expect((await rt.runs.getRun(runId))?.executionArn).toBe(`${passArn.replace(':stateMachine:', ':execution:')}:${runId}`);
    expect(await api(post)).toEqual({ status: 200, body: { runId, status: 'RUNNING', reused: true } });
    // The key again with another input: that run as it ran, saying the input differed.
    expect(await api({ ...post, body: JSON.stringify({ input: { x: 2 } }) })).toEqual({
      status: 200,
      body: { runId, status: 'RUNNING', reused: true, inputDiffers: true },
    });
    // Read, the run settles from its execution (nobody watches it on AWS).
    const shown = await waitFor(async () => {
      const r = await api({ httpMethod: 'GET', path: `/runs/${runId}` });
      return r.body.run.status === 'SUCCEEDED' ? r : undefined;
    });
    expect(shown.body.run).toMatchObject({ workflow: 'hello', idempotencyKey: 'api-key-1', input: { x: 1 } });
    expect(shown.body.steps.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([['P', 'succeeded']]);
    expect((await api({ httpMethod: 'GET', path: '/workflows/hello/runs' })).body.runs.map((r: { runId: string }) => r.runId)).toContain(
      runId,
    );
    expect(await api({ httpMethod: 'GET', path: '/runs/nope' })).toEqual({
      status: 404,
      body: { error: { code: 'unknown_run', message: "no run with id 'nope'" } },
    });
    // The key names that run: another workflow cannot have it.
    expect(await api({ ...post, path: '/workflows/gate/runs', body: JSON.stringify({ input: { x: 1 } }) })).toEqual({
      status: 409,
      body: {
        error: {
          code: 'idempotency_key_conflict',
          message: `idempotency key 'api-key-1' names run ${runId} of workflow 'hello', not a run of 'gate'`,
          details: { runId, workflow: 'hello' },
        },
      },
    });
    const long = await api({ ...post, headers: { 'Idempotency-Key': 'k'.repeat(3000) } });
    expect(long).toEqual({
      status: 400,
      body: {
        error: { code: 'invalid_request', message: 'Idempotency-Key header: an idempotency key is at most 256 characters, got 3000' },
      },
    });
  });

  it("checks the input against the workflow's schema, and refuses an input over Step Functions' 256 KiB, before recording a run", async () => {
    const before = (await rt.runs.listRuns({ workflow: 'hello', limit: 1000 })).length;
    const typed = await api({ httpMethod: 'POST', path: '/workflows/hello/runs', body: JSON.stringify({ input: { x: 'one' } }) });
    expect(typed).toEqual({
      status: 400,
      body: {
        error: {
          code: 'invalid_input',
          message: "invalid workflow input: field 'x' must be a number, got string",
          details: { problems: [{ field: 'x', problem: 'type', expected: 'number', got: 'string' }] },
        },
      },
    });
    const big = await api({
      httpMethod: 'POST',
      path: '/workflows/hello/runs',
      body: JSON.stringify({ input: { text: 'x'.repeat(300 * 1024) } }),
    });
    expect(big.status).toBe(413);
    expect(big.body.error).toMatchObject({
      code: 'input_too_large',
      message: expect.stringMatching(
        /^the run's input is 300\.\d KiB \(\d+ bytes\) as Step Functions execution input; Step Functions takes at most 256 KiB \(262144 bytes\)$/,
      ),
    });
    expect(await rt.runs.listRuns({ workflow: 'hello', limit: 1000 })).toHaveLength(before);
  });

  it('forks with restart --from and retry, and answers wait: true when the fork ends', async () => {
    const started = await api({ httpMethod: 'POST', path: '/workflows/hello/runs', body: JSON.stringify({ input: { x: 5 }, wait: true }) });
    expect(started).toEqual({
      status: 200,
      body: { runId: expect.any(String), status: 'SUCCEEDED', output: expect.objectContaining({ x: 5 }), reused: false },
    });
    const parent = started.body.runId as string;
    const restarted = await api({ httpMethod: 'POST', path: `/runs/${parent}/restart`, body: JSON.stringify({ from: 'P', wait: true }) });
    expect(restarted).toEqual({
      status: 200,
      body: {
        runId: expect.any(String),
        parentRunId: parent,
        status: 'SUCCEEDED',
        output: expect.objectContaining({ x: 5 }),
        rerun: ['P'],
      },
    });
    expect((await rt.runs.getRun(restarted.body.runId))?.parentRunId).toBe(parent);
    const unknownStep = await api({ httpMethod: 'POST', path: `/runs/${parent}/restart`, body: JSON.stringify({ from: 'Q' }) });
    expect(unknownStep).toEqual({
      status: 400,
      body: { error: { code: 'unknown_step', message: "workflow 'hello' has no step 'Q'", details: { runId: parent, step: 'Q' } } },
    });
    const retried = await api({ httpMethod: 'POST', path: `/runs/${parent}/retry`, body: '{}' });
    expect(retried).toEqual({ status: 202, body: { runId: expect.any(String), parentRunId: parent, status: 'RUNNING' } });
  });

  it('lists and decides approvals by the same rules as stepforge serve', async () => {
    expect(await api({ httpMethod: 'GET', path: '/approvals', queryStringParameters: { status: 'maybe' } })).toEqual({
      status: 400,
      body: { error: { code: 'invalid_request', message: "status must be one of PENDING, APPROVED, REJECTED, TIMED_OUT, got 'maybe'" } },
    });
    const refused = await api({ httpMethod: 'POST', path: '/approvals/ap-1', body: JSON.stringify({ decision: 'approve', coment: 'ok' }) });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('coment');
    expect(await api({ httpMethod: 'POST', path: '/approvals/nope', body: JSON.stringify({ decision: 'approve' }) })).toEqual({
      status: 404,
      body: { error: { code: 'unknown_approval', message: "no approval with id 'nope'" } },
    });
  });
});

describe('Function: createTriggerHandler', () => {
  it('starts one run per EventBridge event, even when SQS delivers it twice', async () => {
    const trig = createTriggerHandler(rt);
    const body = JSON.stringify({
      id: 'evt-123',
      'detail-type': 'OrderPlaced',
      source: 'shop',
      detail: { workflow: 'hello', input: { order: 1 } },
    });
    const r1 = (await trig({
      Records: [
        { messageId: 'm1', body },
        { messageId: 'm2', body: '{"nope":true}' },
      ],
    })) as { batchItemFailures: unknown[]; started: { runId: string; reused: boolean }[] };
    expect(r1.batchItemFailures).toEqual([{ itemIdentifier: 'm2' }]);
    const r2 = (await trig({ Records: [{ messageId: 'm1-again', body }] })) as { started: { runId: string; reused: boolean }[] };
    expect(r2.started[0]).toMatchObject({ runId: r1.started[0]?.runId, reused: true });
  });
});
