// One CloudWatch dashboard for the stack: executions per workflow, the handlers' invocations, errors
// and durations, the handlers' own metrics (steps, errors, model tokens, approvals waiting) and the
// dead-letter queues.
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE, type MetricName } from '@stepforge/runtime';

/** Options for StepforgeDashboard. */
export interface StepforgeDashboardProps {
  readonly dashboardName?: string;
  /** State machines by workflow name. */
  readonly machines: ReadonlyMap<string, sfn.IStateMachine>;
  /** Handlers by name (the metrics' `service` dimension is `stepforge-<name>`). */
  readonly handlers: Readonly<Record<string, lambda.IFunction>>;
  readonly deadLetterQueues: Readonly<Record<string, sqs.IQueue>>;
}

const PERIOD = Duration.minutes(5);

/** The stack's dashboard. */
export class StepforgeDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: StepforgeDashboardProps) {
    super(scope, id);
    const handlerNames = Object.keys(props.handlers);
    const custom = (name: MetricName, services: readonly string[], statistic = 'Sum') =>
      services.map(
        (h) =>
          new cloudwatch.Metric({
            namespace: METRICS_NAMESPACE,
            metricName: name,
            dimensionsMap: { service: `stepforge-${h}` },
            statistic,
            period: PERIOD,
            label: h,
          }),
      );
    const machines = [...props.machines];
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      ...(props.dashboardName ? { dashboardName: props.dashboardName } : {}),
      defaultInterval: Duration.hours(3),
      widgets: [
        [
          new cloudwatch.GraphWidget({
            title: 'Executions started',
            width: 8,
            left: machines.map(([n, m]) => m.metricStarted({ period: PERIOD, label: n })),
          }),
          new cloudwatch.GraphWidget({
            title: 'Executions succeeded',
            width: 8,
            left: machines.map(([n, m]) => m.metricSucceeded({ period: PERIOD, label: n })),
          }),
          new cloudwatch.GraphWidget({
            title: 'Executions failed, timed out or aborted',
            width: 8,
            left: machines.flatMap(([n, m]) => [
              m.metricFailed({ period: PERIOD, label: `${n} failed` }),
              m.metricTimedOut({ period: PERIOD, label: `${n} timed out` }),
              m.metricAborted({ period: PERIOD, label: `${n} aborted` }),
            ]),
          }),
        ],
        [
          new cloudwatch.GraphWidget({ title: 'Steps succeeded', width: 8, left: custom('StepsSucceeded', handlerNames) }),
          new cloudwatch.GraphWidget({ title: 'Step errors', width: 8, left: custom('StepErrors', handlerNames) }),
          new cloudwatch.GraphWidget({
            title: 'Model tokens',
            width: 8,
            left: [
              ...custom('ModelInputTokens', ['model']).map((m) => m.with({ label: 'input' })),
              ...custom('ModelOutputTokens', ['model']).map((m) => m.with({ label: 'output' })),
            ],
          }),
        ],
        [
          new cloudwatch.GraphWidget({ title: 'Approvals waiting', width: 8, left: custom('ApprovalsWaiting', ['approvals'], 'Maximum') }),
          new cloudwatch.GraphWidget({
            title: 'Handler errors',
            width: 8,
            left: Object.entries(props.handlers).map(([n, f]) => f.metricErrors({ period: PERIOD, label: n })),
          }),
          new cloudwatch.GraphWidget({
            title: 'Handler duration p95',
            width: 8,
            left: Object.entries(props.handlers).map(([n, f]) => f.metricDuration({ period: PERIOD, statistic: 'p95', label: n })),
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Handler throttles',
            width: 8,
            left: Object.entries(props.handlers).map(([n, f]) => f.metricThrottles({ period: PERIOD, label: n })),
          }),
          new cloudwatch.GraphWidget({
            title: 'Dead-letter queue messages',
            width: 8,
            left: Object.entries(props.deadLetterQueues).map(([n, q]) =>
              q.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: n }),
            ),
          }),
        ],
      ],
    });
  }
}
