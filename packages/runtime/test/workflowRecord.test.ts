// The deploy-time writer of workflow records (the CDK app's custom resource), against dynalite, with
// CloudFormation's response URL a loopback server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleWorkflowRecordEvent, putResponse, type WorkflowRecordEvent } from '../src/handlers/workflowRecord.js';
import { workflowRecord, workflowRecordProblem } from '../src/runs/workflowRecord.js';
import type { StepManifest } from '@stepforge/contract';
import { dynaliteRuntime, json, startHttpServer } from './emulators.js';

const fixture = dynaliteRuntime();

/** A manifest of `a > b` plus `b`'s nested body step `c`, with one required input field. */
const MANIFEST = {
  version: 1,
  workflow: 'orders',
  displayName: 'Orders',
  format: 'dsl',
  type: 'STANDARD',
  steps: [
    { id: 'a', kind: 'function', identity: 'i1', state: 'a', states: ['a'], handler: 'function', functions: [], tools: [], secrets: [] },
    {
      id: 'b',
      kind: 'for_each',
      identity: 'i2',
      state: 'b',
      states: ['b', 'b items'],
      handler: null,
      functions: [],
      tools: [],
      secrets: [],
    },
    {
      id: 'c',
      kind: 'agent',
      identity: 'i3',
      state: 'c',
      states: ['c'],
      parent: 'b',
      handler: 'model',
      functions: [],
      tools: [],
      secrets: [],
    },
  ],
  edges: [['a', 'b']],
  inputSchema: { fields: [{ name: 'order', type: 'string', required: true, hasDefault: false }] },
  placeholders: [],
  secrets: [],
  secretsByHandler: {},
  express: { requested: false },
  triggers: [],
  mcpServers: {},
  bedrockModels: [],
} as const satisfies StepManifest;

let cfn: Awaited<ReturnType<typeof startHttpServer>>;
beforeAll(async () => {
  cfn = await startHttpServer((_req, res) => json(res, 200, {}));
});
afterAll(async () => {
  await cfn.close();
});

function event(type: WorkflowRecordEvent['RequestType'], record: unknown, workflow = 'orders'): WorkflowRecordEvent {
  return {
    RequestType: type,
    ResponseURL: `${cfn.url}/cfn-response?sig=1`,
    StackId: 'arn:aws:cloudformation:eu-west-1:111122223333:stack/S/1',
    RequestId: `req-${type}`,
    LogicalResourceId: 'RecordordersB1E2',
    ...(type !== 'Create' ? { PhysicalResourceId: `stepforge-workflow-record-${workflow}` } : {}),
    ResourceProperties: { Workflow: workflow, Record: JSON.stringify(record) },
  };
}

describe('Function: workflowRecord', () => {
  it('keeps the steps progress and forks need, the edges, the input schema and a version over all of them and the definition', () => {
    const r = workflowRecord(MANIFEST, '{"StartAt":"a"}', 'workflows/orders.yaml');
    expect(r).toEqual({
      name: 'orders',
      displayName: 'Orders',
      file: 'workflows/orders.yaml',
      format: 'dsl',
      inputSchema: MANIFEST.inputSchema,
      steps: [
        { id: 'a', kind: 'function', state: 'a', states: ['a'], lambda: true },
        { id: 'b', kind: 'for_each', state: 'b', states: ['b', 'b items'], lambda: false },
        { id: 'c', kind: 'agent', state: 'c', states: ['c'], parent: 'b', lambda: true },
      ],
      edges: [['a', 'b']],
      version: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    expect(workflowRecord(MANIFEST, '{"StartAt":"a"}').version).toBe(r.version);
    expect(workflowRecord(MANIFEST, '{"StartAt":"b"}').version).not.toBe(r.version);
    expect(workflowRecordProblem(r, 'orders')).toBeUndefined();
  });
});

describe('Function: handleWorkflowRecordEvent', () => {
  it("writes the record as the current one and its version's, and answers CloudFormation SUCCESS at the response URL", async () => {
    const record = workflowRecord(MANIFEST, '{}', 'workflows/orders.yaml');
    const answered = await handleWorkflowRecordEvent(fixture.rt, event('Create', record));
    expect(answered).toEqual({
      Status: 'SUCCESS',
      PhysicalResourceId: 'stepforge-workflow-record-orders',
      StackId: 'arn:aws:cloudformation:eu-west-1:111122223333:stack/S/1',
      RequestId: 'req-Create',
      LogicalResourceId: 'RecordordersB1E2',
    });
    const seen = cfn.requests.at(-1)!;
    expect([seen.method, seen.url, JSON.parse(seen.body)]).toEqual(['PUT', '/cfn-response?sig=1', answered]);
    const current = await fixture.rt.workflows.get<Record<string, unknown>>('orders');
    expect(current).toEqual({ ...record, updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(await fixture.rt.workflows.get('orders', record.version)).toEqual(current);
  });

  it('keeps an older version when an update writes a new one, and removes nothing on delete', async () => {
    const first = workflowRecord(MANIFEST, '{}');
    const second = workflowRecord({ ...MANIFEST, edges: [] }, '{}');
    await handleWorkflowRecordEvent(fixture.rt, event('Create', first));
    expect((await handleWorkflowRecordEvent(fixture.rt, event('Update', second))).Status).toBe('SUCCESS');
    expect((await fixture.rt.workflows.get<{ version: string }>('orders'))?.version).toBe(second.version);
    expect((await fixture.rt.workflows.get<{ edges: unknown }>('orders', first.version))?.edges).toEqual([['a', 'b']]);
    const deleted = await handleWorkflowRecordEvent(fixture.rt, event('Delete', second));
    expect([deleted.Status, deleted.PhysicalResourceId]).toEqual(['SUCCESS', 'stepforge-workflow-record-orders']);
    expect((await fixture.rt.workflows.get<{ version: string }>('orders'))?.version).toBe(second.version);
  });

  it('fails the deployment, with the reason, on a record that is not one or names another workflow, and writes nothing', async () => {
    const record = workflowRecord(MANIFEST, '{}');
    const other = await handleWorkflowRecordEvent(fixture.rt, event('Create', record, 'billing'));
    expect([other.Status, other.Reason]).toEqual(['FAILED', "workflow 'billing': the record names workflow \"orders\", not 'billing'"]);
    const noSchema = await handleWorkflowRecordEvent(
      fixture.rt,
      event('Create', { ...record, name: 'billing', inputSchema: undefined }, 'billing'),
    );
    expect([noSchema.Status, noSchema.Reason]).toEqual(['FAILED', "workflow 'billing': the record has no input schema"]);
    const badJson = await handleWorkflowRecordEvent(fixture.rt, {
      ...event('Create', record, 'billing'),
      ResourceProperties: { Workflow: 'billing', Record: '{' },
    });
    expect(badJson.Status).toBe('FAILED');
    expect(JSON.parse(cfn.requests.at(-1)!.body)).toMatchObject({ Status: 'FAILED', RequestId: 'req-Create' });
    expect(await fixture.rt.workflows.get('billing')).toBeUndefined();
  });

  it('says so when the response URL refuses the answer', async () => {
    const refusing = await startHttpServer((_req, res) => json(res, 403, {}));
    try {
      await expect(
        putResponse(`${refusing.url}/x`, {
          Status: 'SUCCESS',
          PhysicalResourceId: 'p',
          StackId: 's',
          RequestId: 'r',
          LogicalResourceId: 'l',
        }),
      ).rejects.toThrow("CloudFormation's response URL answered 403");
    } finally {
      await refusing.close();
    }
  });
});
