// The run-history table (runs, steps, idempotency records, approvals, agent conversations).
import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

/** Options for RunStore. */
export interface RunStoreProps {
  /** Destroy the table and key with the stack (dev / LocalStack); the default keeps the data. */
  readonly destroyOnRemoval?: boolean;
}

/** Attribute names shared with the runtime's DynamoDB persistence layer (packages/runtime/src/persistence). */
export const RUN_TABLE_KEYS = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttl: 'ttl',
  indexes: [
    { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  ],
} as const;

/**
 * One single-table design table with point-in-time recovery, TTL and a customer managed KMS key.
 * Customer managed rather than AWS managed because step outputs and agent conversations can hold
 * business data: a CMK lets the owner audit every decrypt in CloudTrail, scope decrypt to the
 * stack's roles in the key policy, rotate yearly, and revoke access in one place (about $1/month).
 */
export class RunStore extends Construct {
  readonly table: dynamodb.Table;
  readonly key: kms.Key;

  constructor(scope: Construct, id: string, props: RunStoreProps = {}) {
    super(scope, id);
    const removalPolicy = props.destroyOnRemoval ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN;
    this.key = new kms.Key(this, 'Key', {
      description: 'Stepforge run history and alarm topic encryption',
      enableKeyRotation: true,
      pendingWindow: Duration.days(7),
      removalPolicy,
    });
    // Grants on the key only for AWS resources (DynamoDB makes its own for the table) or to AWS
    // services: no principal of the account can hand the key on to another with CreateGrant.
    this.key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'DenyGrantsExceptForAwsResources',
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ['kms:CreateGrant'],
        resources: ['*'],
        conditions: { BoolIfExists: { 'kms:GrantIsForAWSResource': 'false', 'aws:PrincipalIsAWSService': 'false' } },
      }),
    );
    this.table = new dynamodb.Table(this, 'Runs', {
      partitionKey: { name: RUN_TABLE_KEYS.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: RUN_TABLE_KEYS.sortKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: RUN_TABLE_KEYS.ttl,
      encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED,
      encryptionKey: this.key,
      deletionProtection: !props.destroyOnRemoval,
      removalPolicy,
    });
    for (const index of RUN_TABLE_KEYS.indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
        sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
      });
    }
  }

  /**
   * Let CloudWatch Logs encrypt this account's log groups in this region with the key. The
   * encryption context names the log group, so the condition confines the service to log groups
   * of this account and region (the condition AWS documents for log group keys).
   */
  allowLogsService(): void {
    const stack = Stack.of(this);
    this.key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchLogsOfThisAccount',
        principals: [new iam.ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
        actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
        resources: ['*'],
        conditions: {
          ArnLike: {
            'kms:EncryptionContext:aws:logs:arn': stack.formatArn({
              service: 'logs',
              resource: 'log-group',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
  }

  /**
   * Let CloudWatch alarms of this account publish to the topic encrypted with the key: only on
   * behalf of this account (aws:SourceAccount) and of its alarms in this region (aws:SourceArn),
   * so no other account's alarm can use the key through the service (the confused deputy).
   */
  allowAlarmsToTopic(): void {
    const stack = Stack.of(this);
    this.key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsOfThisAccount',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: {
            'aws:SourceArn': stack.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
  }
}
