import { beforeAll, describe, expect, it } from 'vitest';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { Validations } from 'aws-cdk-lib';
import { API_ROUTES } from '../lib/constructs/StepforgeApi.js';
import { NAG_ACKNOWLEDGEMENTS } from '../lib/nag/addNagSuppressions.js';
import { loadWorkflows } from '../lib/workflows/loadWorkflows.js';
import { substitutePlaceholders } from '@stepforge/contract';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StepforgeStack } from '../lib/StepforgeStack.js';
import { fixtureCompile } from './fixtures/fixtureCompile.js';
import { FIXTURE_WORKFLOWS, ROOT, synthFixtureStack } from './synthFixtureStack.js';

type Resources = Record<string, { Type: string; Properties: Record<string, any> }>;

let stack: StepforgeStack;
let template: Template;
let resources: Resources;

/** Logical id of the resource of `type` whose id starts with `prefix`. */
function logicalId(type: string, prefix: string): string {
  const ids = Object.keys(template.findResources(type)).filter((id) => id.startsWith(prefix));
  expect(ids, `${type} ${prefix}`).toHaveLength(1);
  return ids[0]!;
}

/** Every statement of every inline policy attached to the role whose logical id starts with `rolePrefix`. */
function statementsOf(rolePrefix: string): { Action: string | string[]; Resource: unknown }[] {
  const roleId = logicalId('AWS::IAM::Role', rolePrefix);
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement);
}

const resources_ = (id: string) => resources[id]!.Properties as Record<string, any>;
const actionsOf = (s: { Action: string | string[] }) => (Array.isArray(s.Action) ? s.Action : [s.Action]);

beforeAll(() => {
  // Built-in CloudFormation validation is exercised by `cdk synth` (realWorkflows.test.ts); here it only costs time.
  process.env['CDK_VALIDATION'] = 'false';
  ({ stack, template } = synthFixtureStack());
  resources = template.toJSON().Resources as Resources;
});

describe('Class: StepforgeStack', () => {
  describe('state machines', () => {
    it('deploys each workflow with the compiler ASL as its definition and substitutions for exactly its placeholders', () => {
      const specs = loadWorkflows(FIXTURE_WORKFLOWS, { rootDir: ROOT, compile: fixtureCompile });
      const handlerIds: Record<string, string> = {
        ModelStepFunctionArn: logicalId('AWS::Lambda::Function', 'HandlersModel'),
        ToolStepFunctionArn: logicalId('AWS::Lambda::Function', 'HandlersTool'),
        ConnectorStepFunctionArn: logicalId('AWS::Lambda::Function', 'HandlersConnector'),
        FunctionStepFunctionArn: logicalId('AWS::Lambda::Function', 'HandlersFunction'),
      };
      for (const spec of specs) {
        const sm = resources[logicalId('AWS::StepFunctions::StateMachine', `Workflow${spec.name}StateMachine`)]!.Properties;
        expect(sm['StateMachineName']).toBe(spec.name);
        const expected: Record<string, unknown> = {};
        for (const p of spec.placeholders) {
          expected[p] =
            p === 'ApprovalQueueUrl' ? { Ref: logicalId('AWS::SQS::Queue', 'ApprovalsQueue') } : { 'Fn::GetAtt': [handlerIds[p], 'Arn'] };
        }
        // Bare `${word}` template text maps to itself (identity), so no deploy target rewrites or rejects it.
        const identity = spec.name === 'brief' ? { topic: '${topic}' } : {};
        expect(sm['DefinitionSubstitutions']).toEqual({ ...expected, ...identity });
        // What CloudFormation deploys (template definition with its substitutions applied) equals a fresh
        // compile of the source with the same values put in place of the placeholders.
        const values = Object.fromEntries(
          Object.entries(expected).map(([k, v]) => [k, `resolved:${JSON.stringify(v).replace(/\W+/g, '.')}`]),
        );
        const deployed = substitutePlaceholders(sm['DefinitionString'] as string, values);
        const compiled = fixtureCompile(readFileSync(join(ROOT, spec.file), 'utf8'), { file: spec.file, express: spec.express });
        expect(JSON.parse(deployed)).toEqual(JSON.parse(substitutePlaceholders(JSON.stringify(compiled.asl), values)));
        expect(deployed).not.toMatch(
          /\$\{(ModelStepFunctionArn|ToolStepFunctionArn|ConnectorStepFunctionArn|FunctionStepFunctionArn|McpToolStepFunctionArn|ApprovalQueueUrl|RunsTableName)\}/,
        );
      }
    });

    it('uses Express only where asked and possible, with ALL logging and X-Ray on every machine', () => {
      const types = Object.values(template.findResources('AWS::StepFunctions::StateMachine')).map((r) => [
        r.Properties.StateMachineName,
        r.Properties.StateMachineType,
        r.Properties.LoggingConfiguration.Level,
        r.Properties.TracingConfiguration.Enabled,
      ]);
      expect(types.sort()).toEqual([
        ['brief', 'STANDARD', 'ALL', true],
        ['orders', 'EXPRESS', 'ALL', true],
        ['refund', 'STANDARD', 'ALL', true],
      ]);
    });

    it('lets each state machine invoke only the handlers its definition names', () => {
      const invoked = (name: string) =>
        statementsOf(`Workflow${name}StateMachineRole`)
          .filter((s) => actionsOf(s).includes('lambda:InvokeFunction'))
          .flatMap((s) => (s.Resource as unknown[]).map((r) => JSON.stringify(r)))
          .map((r) => /Handlers(\w+?)[0-9A-F]{8}/.exec(r)![1])
          .sort();
      expect([...new Set(invoked('brief'))]).toEqual(['Model']);
      expect([...new Set(invoked('orders'))]).toEqual(['Connector', 'Function']);
      expect([...new Set(invoked('refund'))]).toEqual(['Model', 'Tool']);
      const refundSqs = statementsOf('WorkflowrefundStateMachineRole').filter((s) => actionsOf(s).some((a) => a.startsWith('sqs:')));
      expect(refundSqs).toHaveLength(1);
      expect(refundSqs[0]!.Resource).toEqual({ 'Fn::GetAtt': [logicalId('AWS::SQS::Queue', 'ApprovalsQueue'), 'Arn'] });
      expect(statementsOf('WorkflowbriefStateMachineRole').some((s) => actionsOf(s).some((a) => a.startsWith('sqs:')))).toBe(false);
    });

    it('raises an alarm on failed, timed-out or aborted executions for every workflow', () => {
      const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter((a) =>
        String(a.Properties.AlarmDescription).includes('an execution failed'),
      );
      expect(alarms).toHaveLength(3);
      for (const a of alarms) {
        expect(a.Properties.Metrics[0].Expression).toBe('failed + timedOut + aborted');
        expect(a.Properties.Threshold).toBe(1);
        expect(a.Properties.AlarmActions).toEqual([{ Ref: logicalId('AWS::SNS::Topic', 'AlarmTopic') }]);
      }
    });
  });

  describe('IAM', () => {
    it('never grants a wildcard action, and Resource "*" only for actions without resource-level permissions', () => {
      const allowedStar = new Set([
        'xray:PutTraceSegments',
        'xray:PutTelemetryRecords',
        'xray:GetSamplingRules',
        'xray:GetSamplingTargets',
        'states:SendTaskSuccess',
        'states:SendTaskFailure',
        'states:SendTaskHeartbeat',
        'logs:CreateLogDelivery',
        'logs:GetLogDelivery',
        'logs:UpdateLogDelivery',
        'logs:DeleteLogDelivery',
        'logs:ListLogDeliveries',
        'logs:PutResourcePolicy',
        'logs:DescribeResourcePolicies',
        'logs:DescribeLogGroups',
      ]);
      for (const policy of Object.values(template.findResources('AWS::IAM::Policy'))) {
        for (const s of policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]) {
          for (const a of actionsOf(s)) {
            expect(a.endsWith(':*') || a === '*', a).toBe(false);
            if (s.Resource === '*' || (Array.isArray(s.Resource) && s.Resource.includes('*'))) expect(allowedStar.has(a), a).toBe(true);
          }
        }
      }
    });

    it('gives every handler its own role that writes only to its own log group', () => {
      for (const h of ['Model', 'Tool', 'Connector', 'Function', 'McpTool', 'Api', 'Trigger', 'Approvals']) {
        const fn = resources[logicalId('AWS::Lambda::Function', `Handlers${h}`)]!.Properties;
        expect(fn['Role']).toEqual({ 'Fn::GetAtt': [logicalId('AWS::IAM::Role', `Handlers${h}Role`), 'Arn'] });
        expect(fn['Runtime']).toBe('nodejs22.x');
        expect(fn['TracingConfig']).toEqual({ Mode: 'Active' });
        const logs = statementsOf(`Handlers${h}Role`).filter((s) => actionsOf(s).includes('logs:PutLogEvents'));
        expect(JSON.stringify(logs)).toContain(`Handlers${h}Logs`);
        expect(JSON.stringify(logs)).not.toMatch(new RegExp(`Handlers(?!${h}Logs)\\w+Logs`));
      }
      const env = resources[logicalId('AWS::Lambda::Function', 'HandlersTool')]!.Properties['Environment'].Variables;
      expect(env.STEPFORGE_MODE).toBe('aws');
      expect(env.STEPFORGE_TABLE).toEqual({ Ref: logicalId('AWS::DynamoDB::Table', 'StoreRuns') });
      expect(JSON.parse(env.STEPFORGE_POLICY)).toEqual(JSON.parse(readFileSync(join(FIXTURE_WORKFLOWS, 'policy.json'), 'utf8')));
      const mcpEnv = resources[logicalId('AWS::Lambda::Function', 'HandlersMcpTool')]!.Properties['Environment'].Variables;
      expect(JSON.parse(mcpEnv.STEPFORGE_MCP_SERVERS)).toEqual({ catalog: { url: 'https://mcp.example.com/mcp' } });
      expect(env.STEPFORGE_MCP_SERVERS).toBeUndefined();
      const managed = Object.values(template.findResources('AWS::IAM::Role')).filter((r) => r.Properties.ManagedPolicyArns);
      expect(managed).toHaveLength(1); // only API Gateway's account-level CloudWatch role
    });

    it('grants secret reads only to the handler whose steps reference them', () => {
      for (const h of ['Model', 'Tool', 'Connector', 'McpTool', 'Api', 'Trigger', 'Approvals']) {
        expect(
          statementsOf(`Handlers${h}Role`).some((s) => actionsOf(s).includes('secretsmanager:GetSecretValue')),
          h,
        ).toBe(false);
      }
      const fnSecrets = statementsOf('HandlersFunctionRole').filter((s) => actionsOf(s).includes('secretsmanager:GetSecretValue'));
      expect(JSON.stringify(fnSecrets)).toContain(':secret:crm/api-key-??????');
      const ssm = statementsOf('HandlersFunctionRole').filter((s) => actionsOf(s).includes('ssm:GetParameter'));
      expect(JSON.stringify(ssm)).toContain(':parameter/stepforge/crm/api-key');
    });

    it('grants bedrock:InvokeModel (what Converse needs) on exactly the models the steps and the project name, to the model handler only', () => {
      const bedrock = statementsOf('HandlersModelRole').filter((s) => actionsOf(s).some((a) => a.startsWith('bedrock:')));
      expect(bedrock).toHaveLength(1);
      expect(actionsOf(bedrock[0]!)).toEqual(['bedrock:InvokeModel']);
      const resources = (bedrock[0]!.Resource as unknown[]).map((r) => JSON.stringify(r));
      expect(resources).toHaveLength(2);
      expect(resources[0]).toContain(':bedrock:\",{\"Ref\":\"AWS::Region\"},\"::foundation-model/amazon.nova-micro-v1:0');
      expect(resources[1]).toContain('::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0');
      for (const role of ['HandlersToolRole', 'HandlersApiRole', 'HandlersFunctionRole']) {
        expect(
          statementsOf(role).some((s) => actionsOf(s).some((a) => a.startsWith('bedrock:'))),
          role,
        ).toBe(false);
      }
      // The model handler knows the project model; the step that names none calls it.
      const env = resources_(logicalId('AWS::Lambda::Function', 'HandlersModel')).Environment.Variables;
      expect(env).toMatchObject({ STEPFORGE_MODEL_PROVIDER: 'bedrock', STEPFORGE_MODEL: 'amazon.nova-micro-v1:0' });
      expect(stack.models.offlineSteps).toEqual([]);
    });

    it('refuses to synthesize a stack whose model steps would run on the echo provider, unless allowOfflineModel=true', () => {
      let error: { code?: string; message?: string; hint?: string; location?: unknown } = {};
      try {
        synthFixtureStack({ model: undefined });
      } catch (e) {
        error = e as never;
      }
      expect(error.code).toBe('offline_model');
      expect(error.message).toMatch(
        /^2 model steps: step "write" of workflow brief \(infra\/test\/fixtures\/workflows\/brief\.chain\.yaml\), step "decide" of workflow refund .* would run on the offline echo provider/,
      );
      expect(error.hint).toContain('-c allowOfflineModel=true');
      const { stack: s, template: t } = synthFixtureStack({ model: undefined, allowOfflineModel: 'true' });
      expect(s.models.offlineSteps.map((m) => `${m.workflow}.${m.step}`)).toEqual(['brief.write', 'refund.decide']);
      const model = Object.entries(t.findResources('AWS::Lambda::Function')).find(([id]) => id.startsWith('HandlersModel'))![1];
      expect(model.Properties.Environment.Variables.STEPFORGE_MODEL_PROVIDER).toBe('local');
    });

    it('reads the OpenAI-compatible key from a secret the model handler alone may read', () => {
      const { template: t } = synthFixtureStack({ model: 'openai:gpt-4o-mini', openaiApiKeySecret: 'stepforge/openai-key' });
      const [id, model] = Object.entries(t.findResources('AWS::Lambda::Function')).find(([k]) => k.startsWith('HandlersModel'))!;
      expect(model.Properties.Environment.Variables).toMatchObject({
        STEPFORGE_MODEL_PROVIDER: 'openai',
        STEPFORGE_MODEL: 'gpt-4o-mini',
        STEPFORGE_OPENAI_API_KEY: '$secret:stepforge/openai-key',
      });
      const roleId = (model.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]!;
      const statements = Object.values(t.findResources('AWS::IAM::Policy'))
        .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
        .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
      expect(JSON.stringify(statements.filter((s) => actionsOf(s).includes('secretsmanager:GetSecretValue')))).toContain(
        ':secret:stepforge/openai-key-??????',
      );
      expect(id).toMatch(/^HandlersModel/);
    });

    it('expires pending approvals on a schedule through the approvals handler', () => {
      template.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: 'rate(1 minute)',
        Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [logicalId('AWS::Lambda::Function', 'HandlersApprovals'), 'Arn'] } })],
      });
    });

    it('lets the trigger starter start only workflows that have triggers', () => {
      const start = statementsOf('HandlersTriggerRole').filter((s) => actionsOf(s).includes('states:StartExecution'));
      expect(start.flatMap((s) => s.Resource as unknown[])).toEqual([
        { Ref: logicalId('AWS::StepFunctions::StateMachine', 'WorkflowordersStateMachine') },
      ]);
      // It may ask for those executions (completing an interrupted start), and nothing else's.
      const describe = statementsOf('HandlersTriggerRole').filter((s) => actionsOf(s).includes('states:DescribeExecution'));
      expect(describe).toHaveLength(1);
      expect(JSON.stringify(describe[0]!.Resource)).toContain(':execution:orders:*');
    });

    it('gives the API no redrive: retry and restart fork a new run', () => {
      const all = statementsOf('HandlersApiRole').flatMap(actionsOf);
      expect(all).toContain('states:StartExecution');
      expect(all).not.toContain('states:RedriveExecution');
    });
  });

  describe('API', () => {
    it('has every route of `stepforge serve`, each requiring IAM auth and validating requests', () => {
      const methods = Object.values(template.findResources('AWS::ApiGateway::Method'));
      expect(methods).toHaveLength(API_ROUTES.length);
      const byId = template.findResources('AWS::ApiGateway::Resource');
      const pathOf = (ref: unknown): string => {
        const id = (ref as { Ref?: string }).Ref;
        if (!id || !byId[id]) return '';
        const r = byId[id]!.Properties;
        return `${pathOf(r.ParentId)}/${r.PathPart}`;
      };
      const routes = methods.map((m) => `${m.Properties.HttpMethod} ${pathOf(m.Properties.ResourceId)}`).sort();
      expect(routes).toEqual(API_ROUTES.map((r) => `${r.method} ${r.path}`).sort());
      const validatorId = logicalId('AWS::ApiGateway::RequestValidator', 'HttpValidator');
      for (const m of methods) {
        expect(m.Properties.AuthorizationType).toBe('AWS_IAM');
        expect(m.Properties.RequestValidatorId).toEqual({ Ref: validatorId });
        if (m.Properties.HttpMethod === 'POST') expect(Object.keys(m.Properties.RequestModels)).toEqual(['application/json']);
      }
      template.hasResourceProperties('AWS::ApiGateway::RequestValidator', { ValidateRequestBody: true, ValidateRequestParameters: true });
      // The gateway's own errors answer in the API's {"error":{"code","message"}} shape.
      template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: 'BAD_REQUEST_BODY',
        ResponseTemplates: { 'application/json': '{"error":{"code":"invalid_request","message":$context.error.messageString}}' },
      });
      template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: 'DEFAULT_4XX',
        ResponseTemplates: {
          'application/json': '{"error":{"code":"$context.error.responseType","message":$context.error.messageString}}',
        },
      });
      template.hasResourceProperties('AWS::ApiGateway::Model', {
        Name: 'ApprovalDecisionBody',
        Schema: Match.objectLike({
          required: ['decision'],
          properties: { decision: { type: 'string', enum: ['approve', 'reject'] }, comment: Match.anyValue() },
        }),
      });
    });

    it('throttles the stage and logs access', () => {
      template.hasResourceProperties('AWS::ApiGateway::Stage', {
        StageName: 'v1',
        TracingEnabled: true,
        AccessLogSetting: Match.objectLike({ DestinationArn: Match.anyValue() }),
        MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100, DataTraceEnabled: false })],
      });
    });
  });

  describe('storage and queues', () => {
    it('has a table with PITR, TTL and customer managed KMS encryption', () => {
      template.hasResourceProperties('AWS::DynamoDB::Table', {
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
        SSESpecification: {
          SSEEnabled: true,
          SSEType: 'KMS',
          KMSMasterKeyId: { 'Fn::GetAtt': [logicalId('AWS::KMS::Key', 'StoreKey'), 'Arn'] },
        },
        BillingMode: 'PAY_PER_REQUEST',
      });
      template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    });

    it('gives the approval and trigger queues a DLQ with redrive, and alarms on DLQ depth', () => {
      for (const name of ['Approvals', 'Triggers']) {
        const q = resources[logicalId('AWS::SQS::Queue', `${name}Queue`)]!.Properties;
        expect(q['RedrivePolicy']).toEqual({
          deadLetterTargetArn: { 'Fn::GetAtt': [logicalId('AWS::SQS::Queue', `${name}Dlq`), 'Arn'] },
          maxReceiveCount: name === 'Approvals' ? 5 : 3,
        });
        expect(q['SqsManagedSseEnabled']).toBe(true);
        const dlqAlarm = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter(
          (a) =>
            a.Properties.MetricName === 'ApproximateNumberOfMessagesVisible' &&
            JSON.stringify(a.Properties.Dimensions).includes(`${name}Dlq`),
        );
        expect(dlqAlarm).toHaveLength(1);
      }
    });
  });

  describe('triggers', () => {
    it('routes each trigger pattern to the trigger queue with the event id, and the starter reports partial batch failures', () => {
      template.resourceCountIs('AWS::Events::Rule', 2); // the trigger and the approval-expiry schedule
      template.hasResourceProperties('AWS::Events::Rule', {
        EventPattern: { source: ['acme.orders'], 'detail-type': ['OrderPlaced'] },
        // The document's own description of the trigger.
        Description: 'New orders start the orders workflow',
        Targets: [
          Match.objectLike({
            Arn: { 'Fn::GetAtt': [logicalId('AWS::SQS::Queue', 'TriggersQueue'), 'Arn'] },
            InputTransformer: Match.objectLike({
              InputPathsMap: Match.objectLike({ id: '$.id', detail: '$.detail' }),
              InputTemplate: Match.stringLikeRegexp('"workflow":"orders","trigger":"placed","idempotencyKey":<id>,"input":<detail>'),
            }),
          }),
        ],
      });
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: { 'Fn::GetAtt': [logicalId('AWS::SQS::Queue', 'TriggersQueue'), 'Arn'] },
        FunctionName: { Ref: logicalId('AWS::Lambda::Function', 'HandlersTrigger') },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
    });
  });

  describe('cdk-nag', () => {
    it('leaves no AwsSolutions finding unacknowledged', () => {
      const report = new AwsSolutionsChecks(stack).validateScope(stack);
      expect(
        report.violations.map(
          (v) => `${v.ruleName} ${v.violatingResources.map((r) => (r as { constructPath?: string }).constructPath).join(',')}`,
        ),
      ).toEqual([]);
    });

    it('acknowledges findings only through the reviewed list, each with a reason', () => {
      const acks = stack.node
        .findAll()
        .flatMap((c) => c.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY))
        .flatMap((m) => Object.entries(m.data as Record<string, unknown>));
      expect(acks.length).toBeGreaterThan(0);
      for (const [id, reason] of acks) {
        const rule = id.replace(/^annotation::/i, '');
        if (rule.startsWith('CloudFormation-Validate::')) continue;
        expect(
          NAG_ACKNOWLEDGEMENTS.some((a) => a.finding.test(rule)),
          rule,
        ).toBe(true);
        expect(JSON.stringify(reason).length, rule).toBeGreaterThan(30);
      }
    });
  });
});

describe('least privilege, key policy and logs', () => {
  type Statement = { Action: string | string[]; Resource: unknown; Condition?: Record<string, Record<string, unknown>> };
  /** (key prefix, action) pairs a role may use on the table itself. */
  function tableAccess(rolePrefix: string): string[] {
    const pairs = new Set<string>();
    for (const st of statementsOf(rolePrefix) as Statement[]) {
      const dynamo = actionsOf(st).filter((a) => a.startsWith('dynamodb:'));
      if (dynamo.length === 0 || JSON.stringify(st.Resource).includes('/index/')) continue;
      // The one unconfined statement the stack grants (checked below): the API's Scan, for forks.
      if (dynamo.length === 1 && dynamo[0] === 'dynamodb:Scan') {
        pairs.add('(table) Scan');
        continue;
      }
      const prefixes = st.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] as string[] | undefined;
      expect(prefixes, `${rolePrefix}: every table statement is confined to item collections`).toBeDefined();
      for (const p of prefixes!) for (const a of dynamo) pairs.add(`${p} ${a.slice(9)}`);
    }
    return [...pairs].sort();
  }
  const STEP = [
    'BLOB#* PutItem',
    'BLOB#* Query',
    'IDEM#* DeleteItem',
    'IDEM#* GetItem',
    'IDEM#* PutItem',
    'IDEM#* UpdateItem',
    'RUN#* GetItem',
    'RUN#* PutItem',
    'RUN#* Query',
    'RUN#* UpdateItem',
  ];

  it('gives each handler only the item collections and actions it uses, batch writes only to the record writer (WORKFLOW items), never whole-table access, Scan only to the API (forks)', () => {
    expect(tableAccess('HandlersModelRole')).toEqual([...STEP, 'CONV#* PutItem', 'CONV#* Query'].sort());
    expect(tableAccess('HandlersToolRole')).toEqual([...STEP, 'APPROVAL#* GetItem', 'APPROVAL#* PutItem', 'APPROVAL#* UpdateItem'].sort());
    expect(tableAccess('HandlersConnectorRole')).toEqual(STEP);
    expect(tableAccess('HandlersFunctionRole')).toEqual(STEP);
    expect(tableAccess('HandlersTriggerRole')).toEqual([
      'RUN#* GetItem',
      'RUN#* PutItem',
      'RUN#* UpdateItem',
      'RUNKEY#* GetItem',
      'RUNKEY#* PutItem',
      'WORKFLOW#* GetItem',
    ]);
    expect(tableAccess('HandlersApprovalsRole')).toEqual([
      'APPROVAL#* GetItem',
      'APPROVAL#* UpdateItem',
      'RUN#* GetItem',
      'RUN#* PutItem',
      'RUN#* Query',
    ]);
    expect(tableAccess('HandlersApiRole')).not.toContain('CONV#* Query');
    expect(tableAccess('HandlersApiRole')).toContain('WORKFLOW#* GetItem');
    expect(tableAccess('HandlersApiRole')).toContain('(table) Scan');
    for (const role of ['HandlersModelRole', 'HandlersToolRole', 'HandlersTriggerRole', 'HandlersApprovalsRole'])
      expect(tableAccess(role), role).not.toContain('(table) Scan');
    const all = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
      (p) => p.Properties.PolicyDocument.Statement as Statement[],
    );
    expect(all.filter((st) => actionsOf(st).includes('dynamodb:Scan'))).toHaveLength(1);
    const dynamoActions = new Set(all.flatMap(actionsOf).filter((a) => a.startsWith('dynamodb:')));
    for (const banned of ['dynamodb:BatchGetItem', 'dynamodb:*', 'dynamodb:DescribeTable'])
      expect(dynamoActions.has(banned), banned).toBe(false);
    // The deploy-time writer of workflow records batches the current and the version's record, and touches nothing else.
    expect(tableAccess('HandlersWorkflowRecordRole')).toEqual(['WORKFLOW#* BatchWriteItem']);
    expect(all.filter((st) => actionsOf(st).includes('dynamodb:BatchWriteItem'))).toHaveLength(1);
    // Index queries only where a handler lists or finds by index, on the named indexes.
    const indexQueries = (role: string) =>
      (statementsOf(role) as Statement[])
        .filter((s) => JSON.stringify(s.Resource).includes('/index/'))
        .map((s) => JSON.stringify(s.Resource));
    expect(indexQueries('HandlersModelRole')).toEqual([]);
    expect(indexQueries('HandlersApprovalsRole').join()).toMatch(/\/index\/gsi2/);
    expect(indexQueries('HandlersApprovalsRole').join()).not.toMatch(/gsi1|index\/\*/);
    // The key only through DynamoDB, and read-only roles never get data keys.
    const kms = (statementsOf('HandlersModelRole') as Statement[]).filter((s) => actionsOf(s).some((a) => a.startsWith('kms:')));
    expect(kms).toHaveLength(1);
    expect(actionsOf(kms[0]!)).toEqual(['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey']);
    expect(JSON.stringify(kms[0]!.Condition)).toContain('kms:ViaService');
  });

  it('lets the logs and alarm services use the stack key only for this account', () => {
    const key = Object.values(template.findResources('AWS::KMS::Key'))[0]!.Properties.KeyPolicy.Statement as (Statement & {
      Principal?: { Service?: unknown };
    })[];
    const byService = (svc: string) => key.filter((s) => JSON.stringify(s.Principal?.Service ?? '').includes(svc));
    const logs = byService('logs.');
    expect(logs).toHaveLength(1);
    expect(JSON.stringify(logs[0]!.Condition!['ArnLike'])).toMatch(
      /kms:EncryptionContext:aws:logs:arn.*:logs:.*AWS::Region.*AWS::AccountId.*:log-group:\*/,
    );
    const alarms = byService('cloudwatch.amazonaws.com');
    expect(alarms).toHaveLength(1);
    expect(alarms[0]!.Condition!['StringEquals']).toEqual({ 'aws:SourceAccount': { Ref: 'AWS::AccountId' } });
    expect(JSON.stringify(alarms[0]!.Condition!['ArnLike'])).toMatch(/aws:SourceArn.*:cloudwatch:.*:alarm:\*/);
  });

  it('encrypts every log group with the stack key, keeps them 365 days and logs no execution data by default', () => {
    const keyId = logicalId('AWS::KMS::Key', 'StoreKey');
    const groups = Object.values(template.findResources('AWS::Logs::LogGroup'));
    expect(groups.length).toBe(
      Object.keys(template.findResources('AWS::Lambda::Function')).length +
        Object.keys(template.findResources('AWS::StepFunctions::StateMachine')).length +
        1,
    );
    for (const g of groups) {
      expect(g.Properties.KmsKeyId).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
      expect(g.Properties.RetentionInDays).toBe(365);
    }
    for (const sm of Object.values(template.findResources('AWS::StepFunctions::StateMachine'))) {
      expect(sm.Properties.LoggingConfiguration).toMatchObject({ Level: 'ALL', IncludeExecutionData: false });
    }
  });

  it('takes the retention and execution-data logging from the context, and refuses a retention CloudWatch does not offer', () => {
    const { template: t } = synthFixtureStack({ logRetentionDays: '90', logExecutionData: 'true' });
    for (const g of Object.values(t.findResources('AWS::Logs::LogGroup'))) expect(g.Properties.RetentionInDays).toBe(90);
    for (const sm of Object.values(t.findResources('AWS::StepFunctions::StateMachine')))
      expect(sm.Properties.LoggingConfiguration.IncludeExecutionData).toBe(true);
    let error: { code?: string; message?: string; hint?: string } = {};
    try {
      synthFixtureStack({ logRetentionDays: '45' });
    } catch (e) {
      error = e as never;
    }
    expect(error.code).toBe('invalid_log_retention');
    expect(error.message).toBe('log retention of 45 days is not one CloudWatch Logs offers');
    expect(error.hint).toMatch(/^use one of 1, 3, 5, 7, 14, 30, 60, 90,/);
    expect(() => synthFixtureStack({ logExecutionData: 'yes' })).toThrowError('context logExecutionData must be true or false (got "yes")');
  });
});

describe('observability', () => {
  it('names the metrics namespace and service for Powertools on every handler, with X-Ray active', () => {
    for (const [id, fn] of Object.entries(template.findResources('AWS::Lambda::Function'))) {
      expect(fn.Properties.TracingConfig, id).toEqual({ Mode: 'Active' });
      expect(fn.Properties.Environment.Variables.POWERTOOLS_METRICS_NAMESPACE, id).toBe('Stepforge');
      expect(fn.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME, id).toMatch(/^stepforge-/);
    }
  });

  it("puts the handlers' metrics, each workflow's executions and the dead-letter queues on one dashboard", () => {
    const dashboards = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(dashboards[0]!.Properties.DashboardBody);
    for (const metric of ['StepsSucceeded', 'StepErrors', 'ModelInputTokens', 'ModelOutputTokens', 'ApprovalsWaiting'])
      expect(body, metric).toContain(`\\"Stepforge\\",\\"${metric}\\"`);
    expect(body).toContain('stepforge-model');
    for (const name of stack.machines.keys()) expect(body, name).toContain(name);
    expect(body).toContain('ExecutionsFailed');
    expect(body).toContain('ApproximateNumberOfMessagesVisible');
  });
});

describe('Class: StepforgeApi', () => {
  it('requires an API key bound to a throttled usage plan with apiAuth=apiKey', () => {
    const { template: t, stack: s } = synthFixtureStack({ apiAuth: 'apiKey' });
    for (const m of Object.values(t.findResources('AWS::ApiGateway::Method'))) {
      expect(m.Properties.ApiKeyRequired).toBe(true);
    }
    t.hasResourceProperties('AWS::ApiGateway::UsagePlan', { Throttle: { RateLimit: 50, BurstLimit: 100 } });
    t.resourceCountIs('AWS::ApiGateway::ApiKey', 1);
    expect(new AwsSolutionsChecks(s).validateScope(s).violations).toEqual([]);
  });

  it('uses a Cognito user pool authorizer with apiAuth=cognito', () => {
    const { template: t, stack: s } = synthFixtureStack({ apiAuth: 'cognito' });
    for (const m of Object.values(t.findResources('AWS::ApiGateway::Method'))) {
      expect(m.Properties.AuthorizationType).toBe('COGNITO_USER_POOLS');
    }
    t.hasResourceProperties('AWS::Cognito::UserPool', { MfaConfiguration: 'ON' });
    expect(new AwsSolutionsChecks(s).validateScope(s).violations.map((v) => v.ruleName)).toEqual([]);
  });

  it('leaves no finding unacknowledged when the region and account are known (as under `cdk synth`)', () => {
    const saved = { region: process.env['CDK_DEFAULT_REGION'], account: process.env['CDK_DEFAULT_ACCOUNT'] };
    process.env['CDK_DEFAULT_REGION'] = 'eu-west-1';
    process.env['CDK_DEFAULT_ACCOUNT'] = '123456789012';
    try {
      const { stack: s } = synthFixtureStack();
      expect(s.region).toBe('eu-west-1');
      expect(new AwsSolutionsChecks(s).validateScope(s).violations.map((v) => v.ruleName)).toEqual([]);
    } finally {
      for (const [k, v] of [
        ['CDK_DEFAULT_REGION', saved.region],
        ['CDK_DEFAULT_ACCOUNT', saved.account],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('rejects an unknown auth mode', () => {
    expect(() => synthFixtureStack({ apiAuth: 'open' })).toThrowError('context apiAuth must be one of iam, apiKey, cognito (got "open")');
  });
});
