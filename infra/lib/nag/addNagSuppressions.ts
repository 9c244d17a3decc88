// cdk-nag AwsSolutions findings that are acknowledged rather than fixed, each with its reason.
// The list is a reviewed allow-list of exact finding shapes (regular expressions over the finding id
// and the construct path): the pack runs once over the finished stack, and only findings that match an
// entry are acknowledged on their own resource. Anything new still fails `cdk synth`.
import { Validations, type Stack } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';

/** One reviewed acknowledgement. */
export interface NagAcknowledgement {
  /** Matches the finding id, e.g. `AwsSolutions-IAM5[Resource::*]`. */
  readonly finding: RegExp;
  /** Matches the construct path of the resource the finding is on. */
  readonly path: RegExp;
  readonly reason: string;
}

/** Every acknowledged finding shape and why it is acceptable. */
export const NAG_ACKNOWLEDGEMENTS: readonly NagAcknowledgement[] = [
  {
    finding: /^AwsSolutions-L1$/,
    path: /\/Handlers\/\w+\/Resource$/,
    reason:
      'Node.js 22.x and, for Python function steps, Python 3.12 are the runtimes the project targets and tests on; newer runtimes are adopted deliberately, not by default.',
  },
  {
    finding: /^AwsSolutions-IAM5\[Resource::<Handlers\w+Logs\w+\.Arn>:log-stream:\*\]$/,
    path: /\/Handlers\/\w+Role\/DefaultPolicy\/Resource$/,
    reason: "Lambda creates its log streams at run time with generated names; the wildcard is confined to the function's own log group.",
  },
  {
    finding: /^AwsSolutions-IAM5\[Action::kms:(GenerateDataKey|ReEncrypt)\*\]$/,
    path: /\/(Handlers\/\w+Role|StateMachine\/Role)\/DefaultPolicy\/Resource$/,
    reason:
      'CDK table grants on a CMK-encrypted table; the action wildcards cover the variants of one operation and the resource is the single stack key.',
  },
  {
    finding: /^AwsSolutions-IAM5\[Resource::<Store\w+\.Arn>\/index\/\*\]$/,
    path: /\/(Handlers\/\w+Role|StateMachine\/Role)\/DefaultPolicy\/Resource$/,
    reason: "Queries on the run table's own GSIs (runs by workflow/status, pending approvals); no other table is reachable.",
  },
  {
    finding: /^AwsSolutions-IAM5\[Resource::\*\]$/,
    path: /\/Handlers\/\w+Role\/DefaultPolicy\/Resource$/,
    reason:
      'xray:PutTraceSegments/PutTelemetryRecords and states:SendTaskSuccess/SendTaskFailure support no resource-level permissions (the task token is the capability).',
  },
  {
    // Region and account are tokens in an environment-agnostic stack and literals when CDK knows them.
    finding:
      /^AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:states:(<AWS::Region>|[a-z0-9-]+):(<AWS::AccountId>|\d{12}):execution:[A-Za-z0-9_-]+:\*\]$/,
    path: /\/Handlers\/ApiRole\/DefaultPolicy\/Resource$/,
    reason: 'Execution names are generated per run; the wildcard covers the executions of one named Stepforge state machine.',
  },
  {
    finding:
      /^AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:states:(<AWS::Region>|[a-z0-9-]+):(<AWS::AccountId>|\d{12}):execution:[A-Za-z0-9_-]+:\*\]$/,
    path: /\/Workflow-[^/]+\/StateMachine\/Role\/DefaultPolicy\/Resource$/,
    reason:
      'A useWorkflow node (startExecution.sync:2) follows and stops the child executions it starts, whose names Step Functions generates; the wildcard covers the executions of one named child state machine.',
  },
  {
    finding:
      /^AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:states:(<AWS::Region>|[a-z0-9-]+):(<AWS::AccountId>|\d{12}):execution:[A-Za-z0-9_-]+:\*\]$/,
    path: /\/Handlers\/FunctionRole\/DefaultPolicy\/Resource$/,
    reason:
      "A retried parent's useWorkflow node reads (states:DescribeExecution only) the child execution it started before, whose name it generated per node run; the wildcard covers the executions of one named child state machine.",
  },
  {
    finding:
      /^AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:states:(<AWS::Region>|[a-z0-9-]+):(<AWS::AccountId>|\d{12}):execution:[A-Za-z0-9_-]+:\*\]$/,
    path: /\/Handlers\/TriggerRole\/DefaultPolicy\/Resource$/,
    reason:
      'A redelivered trigger event whose start was interrupted reads (states:DescribeExecution only) the execution named after its run before completing the start; run ids are generated per run, and the wildcard covers the executions of one triggered state machine.',
  },
  {
    finding: /^AwsSolutions-IAM5\[Resource::\*\]$/,
    path: /\/StateMachine\/Role\/DefaultPolicy\/Resource$/,
    reason:
      'Step Functions log delivery (logs:CreateLogDelivery etc.) and X-Ray tracing require Resource "*" (AWS documentation for state machine logging and tracing).',
  },
  {
    finding: /^AwsSolutions-IAM5\[Resource::<Handlers\w+\.Arn>:\*\]$/,
    path: /\/StateMachine\/Role\/DefaultPolicy\/Resource$/,
    reason: 'lambda:InvokeFunction on the versions and aliases of one step handler the definition references (CDK grantInvoke).',
  },
  {
    finding: /^AwsSolutions-IAM4\[Policy::arn:<AWS::Partition>:iam::aws:policy\/service-role\/AmazonAPIGatewayPushToCloudWatchLogs\]$/,
    path: /\/Http\/Api\/CloudWatchRole\/Resource$/,
    reason:
      "The account-level API Gateway logging role; AWS's managed policy is the documented way to let API Gateway write execution and access logs.",
  },
  {
    finding: /^AwsSolutions-APIG3$/,
    path: /\/Http\/Api\/DeploymentStage\.\w+\/Resource$/,
    reason:
      'Every method requires IAM (SigV4) or Cognito authorization and the stage is throttled; attach a WAF web ACL per account policy (docs/deploy.md).',
  },
  {
    finding: /^AwsSolutions-COG4$/,
    path: /\/Http\/Api\/Default\/.*\/(GET|POST)\/Resource$/,
    reason:
      'Methods use IAM (SigV4) authorization by default, or an API key when deployed with apiAuth=apiKey; Cognito is the apiAuth=cognito option.',
  },
  {
    finding: /^AwsSolutions-APIG4$/,
    path: /\/Http\/Api\/Default\/.*\/(GET|POST)\/Resource$/,
    reason:
      'Only with apiAuth=apiKey: every method requires an API key bound to a throttled usage plan; the IAM default has no such finding.',
  },
];

/** Acknowledge the findings on `stack` that match NAG_ACKNOWLEDGEMENTS; returns how many were acknowledged. */
export function addNagSuppressions(stack: Stack): number {
  const report = new AwsSolutionsChecks(stack).validateScope(stack);
  const byPath = new Map<string, IConstruct>();
  for (const c of stack.node.findAll()) byPath.set(c.node.path, c);
  let count = 0;
  for (const violation of report.violations) {
    for (const resource of violation.violatingResources) {
      const path = (resource as { constructPath?: string }).constructPath ?? '';
      const ack = NAG_ACKNOWLEDGEMENTS.find((a) => a.finding.test(violation.ruleName) && a.path.test(path));
      const construct = byPath.get(path);
      if (ack && construct) {
        Validations.of(construct).acknowledge({ id: violation.ruleName, reason: ack.reason });
        count++;
      }
    }
  }
  return count;
}
