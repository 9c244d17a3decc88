// A handler's access to the run table as IAM: each action only on the item collections the
// runtime says the handler uses (dynamodb:LeadingKeys over their key prefixes), index queries only
// on the indexes it queries, and the table's key only through DynamoDB.
import { Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { ITEM_COLLECTIONS, type TableAccess } from '@stepforge/runtime';

/** Add the statements of `access` to `grantee`'s policy. */
export function grantTableAccess(grantee: iam.IGrantable, table: dynamodb.ITable, key: kms.IKey, access: TableAccess): void {
  const add = (s: iam.PolicyStatement) => grantee.grantPrincipal.addToPrincipalPolicy(s);
  const writes = new Set<string>();
  for (const grant of access.items) {
    const actions = grant.actions.map((a) => `dynamodb:${a}`);
    for (const a of grant.actions) if (a !== 'GetItem' && a !== 'Query') writes.add(a);
    add(
      new iam.PolicyStatement({
        actions,
        resources: [table.tableArn],
        // ForAllValues: every partition key a request names must start with one of these prefixes.
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': grant.collections.map((c) => `${ITEM_COLLECTIONS[c]}*`) } },
      }),
    );
  }
  // Unconfined by nature (a Scan names no partition key): granted only where the runtime says why.
  if (access.scan !== undefined) add(new iam.PolicyStatement({ actions: ['dynamodb:Scan'], resources: [table.tableArn] }));
  if (access.indexes.length > 0) {
    add(new iam.PolicyStatement({ actions: ['dynamodb:Query'], resources: access.indexes.map((i) => `${table.tableArn}/index/${i}`) }));
  }
  // DynamoDB encrypts with the table's key on the caller's behalf: decrypt to read, data keys to write.
  const keyActions = writes.size > 0 ? ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey'] : ['kms:Decrypt'];
  add(
    new iam.PolicyStatement({
      actions: keyActions,
      resources: [key.keyArn],
      conditions: { StringEquals: { 'kms:ViaService': `dynamodb.${Stack.of(table).region}.amazonaws.com` } },
    }),
  );
}
