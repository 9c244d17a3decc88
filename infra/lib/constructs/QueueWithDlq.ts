// An SQS queue with its dead-letter queue and redrive policy, encrypted and TLS-only.
import { Duration } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** Options for QueueWithDlq. */
export interface QueueWithDlqProps {
  /** Visibility timeout: at least 6× the consuming Lambda's timeout (AWS guidance for SQS event sources). */
  readonly visibilityTimeout: Duration;
  /** Receives before a message moves to the DLQ. */
  readonly maxReceiveCount: number;
}

/**
 * A work queue plus DLQ. SSE-SQS (not KMS) so that EventBridge can deliver to the trigger queue
 * without a key policy for events.amazonaws.com; both queues refuse non-TLS requests.
 */
export class QueueWithDlq extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: QueueWithDlqProps) {
    super(scope, id);
    this.deadLetterQueue = new sqs.Queue(this, 'Dlq', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new sqs.Queue(this, 'Queue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: props.visibilityTimeout,
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
    });
  }
}
