// The whole deployment: run store, queues, handlers, one state machine per workflow, the API,
// EventBridge triggers and alarms. Everything is derived from the compiled workflows passed in.
import { ArnFormat, CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subs from 'aws-cdk-lib/aws-sns-subscriptions';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import { grantTableAccess } from './constructs/grantTableAccess.js';
import { QueueWithDlq } from './constructs/QueueWithDlq.js';
import { RETENTION_DAYS } from './constructs/StackLogGroup.js';
import { StepforgeError } from '@stepforge/contract';
import { TABLE_ACCESS } from '@stepforge/runtime';
import { RunStore } from './constructs/RunStore.js';
import { StepforgeDashboard } from './constructs/StepforgeDashboard.js';
import { StepforgeApi, type ApiAuthMode } from './constructs/StepforgeApi.js';
import { StepHandlers } from './constructs/StepHandlers.js';
import { DEPLOYED_SECRETS_BACKEND } from './bundling/handlerBundling.js';
import { WorkflowRecord } from './constructs/WorkflowRecord.js';
import { WorkflowStateMachine } from './constructs/WorkflowStateMachine.js';
import { WorkflowTriggers } from './constructs/WorkflowTriggers.js';
import { addNagSuppressions } from './nag/addNagSuppressions.js';
import { modelSteps } from './models/modelSteps.js';
import { planModels, type ModelOptions, type ModelPlan } from './models/planModels.js';
import { PYTHON_FUNCTION_HANDLER, STEP_HANDLERS, WORKFLOW_RECORD_HANDLER, type HandlerId, type TaskHandlerId } from '@stepforge/contract';
import { routePythonFunctions } from './workflows/routePythonFunctions.js';
import type { WorkflowSpec } from './workflows/WorkflowSpec.js';

/** Where `$secret:<id>` parameters live in SSM (the runtime's STEPFORGE_SSM_PREFIX). */
const SSM_PREFIX = '/stepforge/';

/** Options for StepforgeStack. */
export interface StepforgeStackProps extends StackProps {
  readonly workflows: readonly WorkflowSpec[];
  /** Repository root (esbuild working directory, package-lock.json). */
  readonly projectRoot: string;
  /** Directory with the handler entry files (packages/runtime/src/handlers). */
  readonly handlersDir: string;
  /** Entry of the API Lambda when not `<handlersDir>/api.ts` (buildApp: the serve-routes adapter). */
  readonly apiEntry?: string;
  /** User function modules (functions/user): JavaScript bundled into the function Lambda, Python into the Python function Lambda. */
  readonly userFunctionsDir?: string;
  /** API authorization: IAM (default), API key or Cognito. */
  readonly apiAuth?: ApiAuthMode;
  /** Tear down data with the stack (LocalStack / dev accounts). */
  readonly destroyOnRemoval?: boolean;
  /** E-mail address subscribed to the alarm topic. */
  readonly alarmEmail?: string;
  /** Tool approval policy rules (workflows/policy.json), passed to the handlers as STEPFORGE_POLICY. */
  readonly policyRules?: readonly unknown[];
  /** Extra environment for every handler. */
  readonly handlerEnvironment?: Readonly<Record<string, string>>;
  /** Ship source maps with the handler bundles (off by default; see StepHandlers). */
  readonly sourceMaps?: boolean;
  /** Days the stack's log groups keep events (a CloudWatch Logs retention value; default 365). */
  readonly logRetentionDays?: number;
  /** State machines log each state's input and output too (default false: transitions and errors only). */
  readonly logExecutionData?: boolean;
  /** The project's model settings; every model step must resolve to a real model unless `allowOffline`. */
  readonly models?: ModelOptions;
}

/** Stepforge on AWS. */
export class StepforgeStack extends Stack {
  readonly store: RunStore;
  readonly approvalQueue: QueueWithDlq;
  readonly triggerQueue: QueueWithDlq;
  readonly handlers: StepHandlers;
  readonly machines: ReadonlyMap<string, WorkflowStateMachine>;
  /** Each workflow's record in the runs table, by workflow name. */
  readonly records: ReadonlyMap<string, WorkflowRecord>;
  readonly api: StepforgeApi;
  readonly alarmTopic: sns.Topic;
  readonly dashboard: StepforgeDashboard;

  /** The workflows as deployed: function steps whose function is Python point at the Python function Lambda. */
  readonly workflows: readonly WorkflowSpec[];
  /** Which model each model step calls once deployed, and what the model handler was granted for it. */
  readonly models: ModelPlan;

  constructor(scope: Construct, id: string, props: StepforgeStackProps) {
    super(scope, id, props);
    const destroyOnRemoval = props.destroyOnRemoval ?? false;
    const routed = props.workflows.map((wf) => routePythonFunctions(wf, props.userFunctionsDir));
    const workflows = routed.map((r) => r.workflow);
    this.workflows = workflows;
    // Decided before any resource: a stack that would answer with the echo provider is refused whole.
    this.models = planModels(
      workflows.flatMap((wf) => modelSteps(wf)),
      props.models ?? {},
    );
    this.store = new RunStore(this, 'Store', { destroyOnRemoval });
    // Visibility timeouts are 6× the consuming Lambda's 30 s timeout (AWS guidance for SQS event sources).
    this.approvalQueue = new QueueWithDlq(this, 'Approvals', { visibilityTimeout: Duration.minutes(3), maxReceiveCount: 5 });
    this.triggerQueue = new QueueWithDlq(this, 'Triggers', { visibilityTimeout: Duration.minutes(3), maxReceiveCount: 3 });
    const table = this.store.table;
    const retentionDays = props.logRetentionDays ?? 365;
    if (!RETENTION_DAYS.includes(retentionDays)) {
      throw new StepforgeError('invalid_log_retention', `log retention of ${retentionDays} days is not one CloudWatch Logs offers`, {
        hint: `use one of ${RETENTION_DAYS.join(', ')}`,
      });
    }
    const logSettings = { encryptionKey: this.store.key, retention: retentionDays as logs.RetentionDays };
    this.store.allowLogsService();

    this.handlers = new StepHandlers(this, 'Handlers', {
      projectRoot: props.projectRoot,
      handlersDir: props.handlersDir,
      userFunctionsDir: props.userFunctionsDir,
      codeModules: [...new Map(workflows.flatMap((w) => (w.codeModule ? [[w.codeModule.bundle, w.codeModule] as const] : []))).values()],
      python: routed.some((r) => r.pythonModules.length > 0),
      entryOverrides: props.apiEntry ? { api: props.apiEntry } : undefined,
      destroyOnRemoval,
      logs: logSettings,
      sourceMaps: props.sourceMaps ?? false,
      environment: {
        STEPFORGE_MODE: 'aws',
        STEPFORGE_TABLE: table.tableName,
        STEPFORGE_SECRETS_BACKEND: DEPLOYED_SECRETS_BACKEND,
        STEPFORGE_SSM_PREFIX: SSM_PREFIX,
        STEPFORGE_APPROVAL_QUEUE_URL: this.approvalQueue.queue.queueUrl,
        ...(props.policyRules ? { STEPFORGE_POLICY: JSON.stringify(props.policyRules) } : {}),
        ...props.handlerEnvironment,
      },
    });
    const fns = this.handlers.functions;
    for (const [key, value] of Object.entries(this.models.environment)) fns.model.addEnvironment(key, value);
    const mcpServers: Record<string, unknown> = {};
    for (const wf of workflows) {
      for (const [name, config] of Object.entries(wf.mcpServers)) {
        if (name in mcpServers && JSON.stringify(mcpServers[name]) !== JSON.stringify(config)) {
          throw new Error(`MCP server "${name}" is declared differently by two workflows (one is ${wf.file}); give them different names`);
        }
        mcpServers[name] = config;
      }
    }
    if (Object.keys(mcpServers).length > 0) fns.mcpTool.addEnvironment('STEPFORGE_MCP_SERVERS', JSON.stringify(mcpServers));
    // Each role reaches only the item collections its handler uses, with only the actions it uses.
    for (const name of Object.keys(fns) as HandlerId[]) grantTableAccess(fns[name], table, this.store.key, TABLE_ACCESS[name]!);
    if (this.handlers.pythonFunction)
      grantTableAccess(this.handlers.pythonFunction, table, this.store.key, TABLE_ACCESS[PYTHON_FUNCTION_HANDLER]!);
    grantTableAccess(this.handlers.workflowRecord, table, this.store.key, TABLE_ACCESS[WORKFLOW_RECORD_HANDLER]!);
    // A tool call that policy gates asks for approval through the queue (with the task token).
    this.approvalQueue.queue.grantSendMessages(fns.tool);
    fns.approvals.addEventSource(new SqsEventSource(this.approvalQueue.queue, { batchSize: 10, reportBatchItemFailures: true }));

    const stepFunctions: Partial<Record<TaskHandlerId, (typeof fns)['model'] | NonNullable<StepHandlers['pythonFunction']>>> = {
      ...Object.fromEntries(STEP_HANDLERS.map((h) => [h, fns[h]])),
      ...(this.handlers.pythonFunction ? { [PYTHON_FUNCTION_HANDLER]: this.handlers.pythonFunction } : {}),
    };
    const machines = new Map<string, WorkflowStateMachine>();
    for (const wf of workflows) {
      machines.set(
        wf.name,
        new WorkflowStateMachine(this, `Workflow-${wf.name}`, {
          workflow: wf,
          stepFunctions,
          approvalQueue: this.approvalQueue.queue,
          table,
          logs: { ...logSettings, destroyOnRemoval },
          logExecutionData: props.logExecutionData ?? false,
        }),
      );
    }
    this.machines = machines;
    // Each workflow's record (input schema, steps, edges), written at deploy time once the writer may write it.
    const records = new Map<string, WorkflowRecord>();
    for (const wf of workflows) {
      const record = new WorkflowRecord(this, `Record-${wf.name}`, { workflow: wf, writer: this.handlers.workflowRecord });
      record.node.addDependency(this.handlers.workflowRecord.role!);
      records.set(wf.name, record);
    }
    this.records = records;

    // Secrets and models: each step handler may read only what the workflows it serves reference.
    for (const h of [...STEP_HANDLERS, ...(this.handlers.pythonFunction ? ([PYTHON_FUNCTION_HANDLER] as const) : [])]) {
      const ids = [...new Set(workflows.flatMap((wf) => wf.secretsByHandler[h] ?? []))].sort();
      this.handlers.grantSecrets(h, ids, SSM_PREFIX);
      // An approved tool call runs in the API Lambda (the approver's request), with the tool's secrets.
      if (h === 'tool') this.handlers.grantSecrets('api', ids, SSM_PREFIX);
    }
    this.handlers.grantBedrockModels(this.models.bedrockModels);
    this.handlers.grantSecrets('model', this.models.secrets, SSM_PREFIX);

    // The API starts, inspects, forks and cancels executions of these machines, and resolves approvals.
    const all = [...machines.values()].map((m) => m.stateMachine);
    const triggered = workflows.filter((wf) => wf.triggers.length > 0).map((wf) => machines.get(wf.name)!.stateMachine);
    fns.api.addEnvironment(
      'STEPFORGE_STATE_MACHINES',
      Stack.of(this).toJsonString(Object.fromEntries([...machines].map(([n, m]) => [n, m.stateMachine.stateMachineArn]))),
    );
    fns.trigger.addEnvironment(
      'STEPFORGE_STATE_MACHINES',
      Stack.of(this).toJsonString(
        Object.fromEntries(
          workflows.filter((wf) => wf.triggers.length > 0).map((wf) => [wf.name, machines.get(wf.name)!.stateMachine.stateMachineArn]),
        ),
      ),
    );
    if (all.length > 0) {
      fns.api.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['states:StartExecution', 'states:ListExecutions', 'states:DescribeStateMachine'],
          resources: all.map((m) => m.stateMachineArn),
        }),
      );
      fns.api.addToRolePolicy(
        new iam.PolicyStatement({
          // Retry and restart fork a new run (the run service), so no redrive.
          actions: ['states:DescribeExecution', 'states:StopExecution', 'states:GetExecutionHistory'],
          resources: [...machines.keys()].map((name) => executionArnPattern(this, name)),
        }),
      );
    }
    // A retried parent's useWorkflow node asks, in the function handler, what the child execution
    // it started before did (its output is reused when it succeeded).
    const childNames = [...new Set(workflows.flatMap((wf) => wf.childWorkflows ?? []))].sort();
    if (childNames.length > 0) {
      fns.function.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['states:DescribeExecution'],
          resources: childNames.map((name) => executionArnPattern(this, name)),
        }),
      );
    }
    // Task-token calls have no resource-level permissions in IAM: the token itself is the capability.
    // Gated tool calls arrive with a task token: the tool handlers answer it themselves when policy
    // allows, the API when a human decides, the approvals consumer when the approval times out.
    for (const h of ['api', 'approvals', 'tool', 'mcpTool'] as const) {
      fns[h].addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['states:SendTaskSuccess', 'states:SendTaskFailure', 'states:SendTaskHeartbeat'],
          resources: ['*'],
        }),
      );
    }
    if (triggered.length > 0) {
      fns.trigger.addToRolePolicy(
        new iam.PolicyStatement({ actions: ['states:StartExecution'], resources: triggered.map((m) => m.stateMachineArn) }),
      );
      // A redelivered event whose start was interrupted finds its run recorded: the run service asks
      // for the execution before it completes that start (or answers the run as it is).
      const triggeredNames = workflows.filter((wf) => wf.triggers.length > 0).map((wf) => wf.name);
      fns.trigger.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['states:DescribeExecution'],
          resources: triggeredNames.map((name) => executionArnPattern(this, name)),
        }),
      );
    }

    this.api = new StepforgeApi(this, 'Http', { handler: fns.api, auth: props.apiAuth ?? 'iam', destroyOnRemoval, logs: logSettings });
    new WorkflowTriggers(this, 'Triggers-', { workflows, queue: this.triggerQueue.queue, starter: fns.trigger });
    // API Gateway may invoke the API Lambda only for this account: CDK's permissions name the API's
    // execute-api ARN (an Fn::Join, which Control Tower's rule cannot read); the account says it plainly.
    for (const c of this.node.findAll()) {
      if (c instanceof lambda.CfnPermission && c.principal === 'apigateway.amazonaws.com' && c.sourceAccount === undefined)
        c.sourceAccount = this.account;
    }

    // Pending approvals past their deadline time out (a timeout is a denial): the approvals handler
    // expires them on every scheduled event. A schedule rather than the waiting state's
    // HeartbeatSeconds/TimeoutSeconds: the deadline is the matching policy rule's (timeout_s), known
    // only when the call is made, while a state's timeouts are fixed when it is compiled. Every
    // minute (EventBridge's finest rate), so a deadline holds to within a minute; the state's
    // TimeoutSeconds stays the outer bound.
    new events.Rule(this, 'ApprovalExpiry', {
      description: 'Stepforge: expire pending approvals past their deadline',
      schedule: events.Schedule.rate(Duration.minutes(1)),
      targets: [new targets.LambdaFunction(fns.approvals, { retryAttempts: 2 })],
    });

    // Alarms → an encrypted, TLS-only topic.
    this.alarmTopic = new sns.Topic(this, 'AlarmTopic', { displayName: 'Stepforge alarms', masterKey: this.store.key, enforceSSL: true });
    this.store.allowAlarmsToTopic();
    if (props.alarmEmail) this.alarmTopic.addSubscription(new subs.EmailSubscription(props.alarmEmail));
    const action = new cwActions.SnsAction(this.alarmTopic);
    for (const m of machines.values()) m.failedAlarm.addAlarmAction(action);
    for (const [name, q] of [
      ['Approvals', this.approvalQueue],
      ['Triggers', this.triggerQueue],
    ] as const) {
      new cloudwatch.Alarm(this, `${name}DlqAlarm`, {
        alarmDescription: `Stepforge ${name.toLowerCase()} dead-letter queue has messages`,
        metric: q.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }).addAlarmAction(action);
    }

    const dashboardHandlers: Record<string, lambda.IFunction> = { ...fns };
    if (this.handlers.pythonFunction) dashboardHandlers[PYTHON_FUNCTION_HANDLER] = this.handlers.pythonFunction;
    this.dashboard = new StepforgeDashboard(this, 'Dashboard', {
      machines: new Map([...machines].map(([n, m]) => [n, m.stateMachine])),
      handlers: dashboardHandlers,
      deadLetterQueues: { approvals: this.approvalQueue.deadLetterQueue, triggers: this.triggerQueue.deadLetterQueue },
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.api.url });
    new CfnOutput(this, 'RestApiId', { value: this.api.api.restApiId });
    new CfnOutput(this, 'ApiStage', { value: this.api.api.deploymentStage.stageName });
    new CfnOutput(this, 'RunsTableName', { value: table.tableName });
    new CfnOutput(this, 'ApprovalQueueUrl', { value: this.approvalQueue.queue.queueUrl });
    new CfnOutput(this, 'TriggerQueueUrl', { value: this.triggerQueue.queue.queueUrl });
    new CfnOutput(this, 'StateMachines', {
      value: Stack.of(this).toJsonString(Object.fromEntries([...machines].map(([n, m]) => [n, m.stateMachine.stateMachineArn]))),
    });

    addNagSuppressions(this);
  }
}

/** `arn:…:execution:<machine>:*` — every execution of one state machine. */
function executionArnPattern(stack: Stack, stateMachineName: string): string {
  return stack.formatArn({
    service: 'states',
    resource: 'execution',
    resourceName: `${stateMachineName}:*`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
}
