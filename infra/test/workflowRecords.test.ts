// A deployed workflow's record: the synthesized stack writes one per workflow at deploy time (a custom
// resource over the workflowRecord Lambda, which may write WORKFLOW items and nothing else), and the
// deployed API, once the record is written, checks a start against the declared input and lets
// `restart --from` find the workflow's steps. The runtime half runs the custom resource's own event
// (its properties as synthesized) through the writer, and the API handler, against dynalite and the
// engine on loopback, as the deployed Lambdas would against DynamoDB and Step Functions.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateStateMachineCommand, SFNClient } from '@aws-sdk/client-sfn';
import { Match } from 'aws-cdk-lib/assertions';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileDocument } from '@stepforge/compiler';
import { startEngineServer, type EngineServer } from '@stepforge/engine';
import { ITEM_COLLECTIONS, type Runtime } from '@stepforge/runtime';
import { handleApiEvent } from '../../packages/runtime/src/handlers/api.js';
import { handleWorkflowRecordEvent } from '../../packages/runtime/src/handlers/workflowRecord.js';
import { buildApp } from '../lib/buildApp.js';
import { WORKFLOW_RECORD_RESOURCE_TYPE } from '../lib/constructs/WorkflowRecord.js';
import type { StepforgeStack } from '../lib/StepforgeStack.js';
import { json, makeRuntime, startDynalite, startHttpServer, type DynamoEndpoint } from '../../packages/runtime/test/emulators.js';
import { ROOT } from './synthFixtureStack.js';

const ORDERS = `document: { dsl: "1.0", name: orders, version: "1" }
input:
  order: { type: string, required: true }
  currency: { type: string, default: EUR }
steps:
  check: { call: connector, connector: slack, action: send_message }
  charge: { call: connector, connector: slack, action: send_message, after: [check] }
  notify: { call: connector, connector: slack, action: send_message, after: [charge] }
`;

let dir: string;
let stack: StepforgeStack;
let template: Template;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sf-records-'));
  writeFileSync(join(dir, 'orders.yaml'), ORDERS);
  ({ stack } = buildApp({
    projectRoot: ROOT,
    workflowsDir: dir,
    handlersDir: join(ROOT, 'infra/test/fixtures/handlers'),
    compile: compileDocument,
    appProps: { context: { 'aws:cdk:bundling-stacks': [] } },
  }));
  template = Template.fromStack(stack);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The synthesized record resource of a workflow: its properties and what it depends on. */
function recordResource(name: string): { Properties: { ServiceToken: unknown; Workflow: string; Record: string }; DependsOn?: string[] } {
  const found = Object.values(template.findResources(WORKFLOW_RECORD_RESOURCE_TYPE)) as { Properties: { Workflow: string } }[];
  const r = found.find((x) => x.Properties.Workflow === name);
  if (!r) throw new Error(`no record resource for ${name}`);
  return r as never;
}

describe('Construct: WorkflowRecord (synth)', () => {
  it("writes each workflow's record (input schema, steps, edges, version) through the workflowRecord Lambda", () => {
    template.resourceCountIs(WORKFLOW_RECORD_RESOURCE_TYPE, 1);
    const writer = stack.getLogicalId(stack.handlers.workflowRecord.node.defaultChild as never);
    const r = recordResource('orders');
    expect(r.Properties.ServiceToken).toEqual({ 'Fn::GetAtt': [writer, 'Arn'] });
    const record = JSON.parse(r.Properties.Record) as Record<string, unknown>;
    expect(record).toEqual({
      name: 'orders',
      displayName: 'orders',
      file: expect.stringMatching(/orders\.yaml$/),
      format: 'dsl',
      inputSchema: {
        fields: [
          { name: 'order', type: 'string', required: true, hasDefault: false, location: expect.objectContaining({ line: 3 }) },
          {
            name: 'currency',
            type: 'string',
            required: false,
            default: 'EUR',
            hasDefault: true,
            location: expect.objectContaining({ line: 4 }),
          },
        ],
      },
      steps: ['check', 'charge', 'notify'].map((id) => ({ id, kind: 'connector', state: id, states: [id], lambda: true })),
      edges: [
        ['check', 'charge'],
        ['charge', 'notify'],
      ],
      version: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    // The record the stack deploys is the one the construct built from the manifest.
    expect(record).toEqual(JSON.parse(JSON.stringify(stack.records.get('orders')!.record)));
    // Written only once the writer's role (and its policy) exists.
    expect(r.DependsOn).toEqual(
      expect.arrayContaining([stack.getLogicalId(stack.handlers.workflowRecord.role!.node.defaultChild as never)]),
    );
  });

  it('lets the writer batch-write WORKFLOW items and nothing else of the table', () => {
    const role = stack.getLogicalId(stack.handlers.workflowRecord.role!.node.defaultChild as never);
    const policies = Object.values(template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: role }] } })) as {
      Properties: { PolicyDocument: { Statement: { Action: string | string[]; Condition?: unknown }[] } };
    }[];
    const statements = policies.flatMap((p) => p.Properties.PolicyDocument.Statement);
    const table = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('dynamodb:')));
    expect(table).toEqual([
      expect.objectContaining({
        Action: 'dynamodb:BatchWriteItem',
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${ITEM_COLLECTIONS.workflow}*`] } },
      }),
    ]);
    expect(statements.flatMap((s) => [s.Action].flat()).sort()).toEqual([
      'dynamodb:BatchWriteItem',
      'kms:Decrypt',
      'kms:Encrypt',
      'kms:GenerateDataKey',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'xray:PutTelemetryRecords',
      'xray:PutTraceSegments',
    ]);
    template.hasResourceProperties(
      'AWS::Lambda::Function',
      Match.objectLike({ Environment: { Variables: Match.objectLike({ STEPFORGE_HANDLER: 'workflowRecord' }) } }),
    );
  });
});

describe('Function: the deployed API over a deployed record', () => {
  const FN = 'arn:aws:lambda:us-east-1:123456789012:function:ConnectorStepFunction';
  let ddb: DynamoEndpoint;
  let engine: EngineServer;
  let cfn: Awaited<ReturnType<typeof startHttpServer>>;
  let rt: Runtime;

  beforeAll(async () => {
    ddb = await startDynalite();
    // The connector fails every call: the run ends FAILED, which is what a fork needs of its parent.
    engine = await startEngineServer({
      handlers: {
        ConnectorStepFunction: () => {
          throw Object.assign(new Error('slack is down'), { name: 'ConnectorError' });
        },
      },
      substitutions: { ConnectorStepFunctionArn: FN },
    });
    cfn = await startHttpServer((_req, res) => json(res, 200, {}));
    const sfn = new SFNClient({ region: 'us-east-1', endpoint: engine.url, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
    const wf = stack.workflows.find((w) => w.name === 'orders')!;
    const { stateMachineArn } = await sfn.send(
      new CreateStateMachineCommand({ name: 'orders', definition: JSON.stringify(wf.asl), roleArn: 'arn:aws:iam::123456789012:role/x' }),
    );
    sfn.destroy();
    // As the stack configures the api Lambda: its state machines by name.
    rt = await makeRuntime(ddb.endpoint, { endpoints: { stepfunctions: engine.url }, stateMachines: { orders: stateMachineArn! } });
  });
  afterAll(async () => {
    await rt.close();
    await cfn.close();
    await engine.close();
    await ddb.stop();
  });

  const api = async (httpMethod: string, path: string, body?: unknown) => {
    const r = await handleApiEvent(rt, {
      httpMethod,
      path,
      headers: { 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: r.statusCode, body: JSON.parse(r.body) as Record<string, any> };
  };

  it('serves the workflow with no declared input and no steps before the record is written', async () => {
    const listed = await api('GET', '/workflows');
    expect(listed.body).toMatchObject({ workflows: [{ name: 'orders', steps: [] }] });
  });

  it('checks starts against the declared input and finds the steps restart --from names, once the record is written', async () => {
    const { Properties } = recordResource('orders');
    const written = await handleWorkflowRecordEvent(rt, {
      RequestType: 'Create',
      ResponseURL: `${cfn.url}/response`,
      StackId: 'stack',
      RequestId: 'r1',
      LogicalResourceId: 'Recordorders',
      ResourceProperties: { Workflow: Properties.Workflow, Record: Properties.Record },
    });
    expect(written.Status).toBe('SUCCESS');

    const missing = await api('POST', '/workflows/orders/runs', { input: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'invalid_input', message: expect.stringContaining('order') });

    const started = await api('POST', '/workflows/orders/runs', { input: { order: 'o-1' }, wait: true });
    expect(started.body).toMatchObject({ status: 'FAILED', reused: false });
    const runId = started.body.runId as string;
    // The declared default is applied, as embedded.
    const shown = await api('GET', `/runs/${runId}`);
    expect(shown.body.run).toMatchObject({ workflow: 'orders', status: 'FAILED', input: { order: 'o-1', currency: 'EUR' } });
    // Progress knows the workflow's steps too.
    expect(shown.body.steps.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
      ['check', 'failed'],
      ['charge', 'skipped'],
      ['notify', 'skipped'],
    ]);

    const unknown = await api('POST', `/runs/${runId}/restart`, { from: 'refund' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'unknown_step', message: "workflow 'orders' has no step 'refund'" });

    const restarted = await api('POST', `/runs/${runId}/restart`, { from: 'charge' });
    expect(restarted.status).toBe(202);
    expect(restarted.body).toMatchObject({ rerun: ['charge', 'notify'], runId: expect.any(String) });
    const fork = await api('GET', `/runs/${restarted.body.runId as string}`);
    expect(fork.body.run).toMatchObject({ workflow: 'orders', parentRunId: runId, input: { order: 'o-1', currency: 'EUR' } });
  });
});
