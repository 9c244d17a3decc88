// One Step Functions state machine for one compiled workflow: the compiler's ASL as is, with the
// placeholders filled through DefinitionSubstitutions, logging ALL to CloudWatch and X-Ray tracing.
import { ArnFormat, Duration, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { LAMBDA_PLACEHOLDERS, type TaskHandlerId } from '@stepforge/contract';
import { StackLogGroup, type LogSettings } from './StackLogGroup.js';
import { workflowLabel, type WorkflowSpec } from '../workflows/WorkflowSpec.js';

/** Options for WorkflowStateMachine. */
export interface WorkflowStateMachineProps {
  readonly workflow: WorkflowSpec;
  /** The Lambdas its Tasks may name (the Python function Lambda only when the stack deploys it). */
  readonly stepFunctions: Readonly<Partial<Record<TaskHandlerId, lambda.IFunction>>>;
  readonly approvalQueue: sqs.IQueue;
  readonly table: dynamodb.ITable;
  /** The state machine's log group: key, retention, removal. */
  readonly logs: LogSettings;
  /** Log each state's input and output too (prompts, model answers, tool results); off by default. */
  readonly logExecutionData?: boolean;
}

/** A workflow's state machine, its log group and its failed-executions alarm. */
export class WorkflowStateMachine extends Construct {
  readonly stateMachine: sfn.StateMachine;
  readonly failedAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: WorkflowStateMachineProps) {
    super(scope, id);
    const { workflow } = props;
    // The /aws/vendedlogs/ prefix keeps the log group's resource policy small (AWS guidance for Step Functions).
    const logGroup = new StackLogGroup(this, 'Logs', props.logs, { logGroupName: `/aws/vendedlogs/states/stepforge-${workflow.name}` });

    const substitutions: Record<string, string> = {};
    const lambdaOf = (handler: TaskHandlerId): lambda.IFunction => {
      const fn = props.stepFunctions[handler];
      if (!fn) throw new Error(`workflow ${workflow.name} (${workflow.file}) calls the ${handler} Lambda, which the stack does not deploy`);
      return fn;
    };
    for (const placeholder of workflow.placeholders) {
      const handler = LAMBDA_PLACEHOLDERS[placeholder];
      if (handler) substitutions[placeholder] = lambdaOf(handler).functionArn;
      else if (placeholder === 'ApprovalQueueUrl') substitutions[placeholder] = props.approvalQueue.queueUrl;
      else if (placeholder === 'RunsTableName') substitutions[placeholder] = props.table.tableName;
    }

    // Template text such as `${topic}` (a DSL bare path carried verbatim in a step's config) looks like a
    // substitution key. Map each such token to itself, so that substitution is the identity for it both on
    // AWS (which replaces only known keys) and on LocalStack (which rejects `${word}` tokens without a key).
    for (const token of identityTokens(JSON.stringify(workflow.asl))) substitutions[token] ??= '${' + token + '}';

    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      stateMachineName: workflow.name,
      stateMachineType: workflow.express ? sfn.StateMachineType.EXPRESS : sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromString(JSON.stringify(workflow.asl)),
      definitionSubstitutions: substitutions,
      logs: { destination: logGroup, level: sfn.LogLevel.ALL, includeExecutionData: props.logExecutionData ?? false },
      tracingEnabled: true,
      // No `comment`: CDK puts it only into definitions it builds from states. This definition's own
      // Comment, the compiler's, names the workflow by its display name and its source file.
    });

    // Step Functions fills only the keys given in DefinitionSubstitutions; any other `${…}` in the
    // definition is template text carried in a step's configuration (e.g. a prompt), meant verbatim.
    Validations.of(this.stateMachine).acknowledge({
      id: 'CloudFormation-Validate::E1029',
      reason: 'DefinitionSubstitutions replaces only its own keys; other ${…} strings are step templates passed to handlers as data.',
    });

    // Least privilege: the role may reach only what this definition names.
    for (const placeholder of workflow.placeholders) {
      const handler = LAMBDA_PLACEHOLDERS[placeholder];
      if (handler) lambdaOf(handler).grantInvoke(this.stateMachine);
      else if (placeholder === 'ApprovalQueueUrl') props.approvalQueue.grantSendMessages(this.stateMachine);
      else if (placeholder === 'RunsTableName') props.table.grantReadWriteData(this.stateMachine);
    }
    // A useWorkflow node's startExecution.sync:2: start the child's state machine, follow and stop its
    // executions, and the managed EventBridge rule through which Step Functions learns a child ended.
    const children = workflow.childWorkflows ?? [];
    if (children.length > 0) {
      const stack = Stack.of(this);
      this.stateMachine.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['states:StartExecution'],
          resources: children.map((c) =>
            stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: c, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
          ),
        }),
      );
      this.stateMachine.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['states:DescribeExecution', 'states:StopExecution'],
          resources: children.map((c) =>
            stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${c}:*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
          ),
        }),
      );
      this.stateMachine.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'],
          resources: [
            stack.formatArn({ service: 'events', resource: 'rule', resourceName: 'StepFunctionsGetEventsForStepFunctionsExecutionRule' }),
          ],
        }),
      );
    }

    this.failedAlarm = new cloudwatch.Alarm(this, 'FailedAlarm', {
      alarmDescription: `Stepforge workflow ${workflowLabel(workflow)}: an execution failed, timed out or was aborted`,
      metric: new cloudwatch.MathExpression({
        expression: 'failed + timedOut + aborted',
        usingMetrics: {
          failed: this.stateMachine.metricFailed({ statistic: 'Sum' }),
          timedOut: this.stateMachine.metricTimedOut({ statistic: 'Sum' }),
          aborted: this.stateMachine.metricAborted({ statistic: 'Sum' }),
        },
        period: Duration.minutes(5),
      }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }
}

/** `${word}` tokens in a definition that DefinitionSubstitutions would treat as keys (letters, digits, _). */
export function identityTokens(definition: string): string[] {
  return [...new Set([...definition.matchAll(/\$\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!))].sort();
}
