// Every log group of the stack is made here: encrypted with the stack's key (prompts, outputs and
// request bodies can reach logs, and they are the data the key protects), with one retention.
import { RemovalPolicy } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/** How the stack's log groups are kept. */
export interface LogSettings {
  /** The stack key (its policy lets the CloudWatch Logs service use it for this account's log groups). */
  readonly encryptionKey: kms.IKey;
  readonly retention: logs.RetentionDays;
  /** Delete the log groups with the stack (dev, LocalStack); kept by default. */
  readonly destroyOnRemoval?: boolean;
}

/** Days of retention CloudWatch Logs accepts (RetentionDays), for checking a configured value. */
export const RETENTION_DAYS: readonly number[] = Object.values(logs.RetentionDays).filter(
  (v): v is number => typeof v === 'number' && v !== logs.RetentionDays.INFINITE,
);

/** A log group of the stack: KMS-encrypted with the stack key, the configured retention. */
export class StackLogGroup extends logs.LogGroup {
  constructor(scope: Construct, id: string, settings: LogSettings, props: Pick<logs.LogGroupProps, 'logGroupName'> = {}) {
    super(scope, id, {
      ...props,
      encryptionKey: settings.encryptionKey,
      retention: settings.retention,
      removalPolicy: settings.destroyOnRemoval ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });
  }
}
