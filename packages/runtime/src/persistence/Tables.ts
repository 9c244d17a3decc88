import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/** GSI over (workflow, start time): `runs list --workflow W`. */
export const GSI_BY_WORKFLOW = 'gsi1';
/** GSI over (kind#status, time): `runs list --status S` and `approvals list`. */
export const GSI_BY_STATUS = 'gsi2';

/**
 * The one table's definition. Single-table design: every record kind has its own key prefix
 * (`RUN#`, `IDEM#`, `APPROVAL#`, `CONV#`, `BLOB#`, `RUNKEY#`), so one `${RunsTableName}` placeholder
 * and one CDK table cover runs, steps, idempotency, approvals, conversations and large outputs.
 * The CDK stack builds the same keys and indexes from this definition.
 */
export function tableDefinition(tableName: string): CreateTableCommandInput {
  const s = (n: string) => ({ AttributeName: n, AttributeType: 'S' as const });
  const gsi = (name: string, pk: string, sk: string) => ({
    IndexName: name,
    KeySchema: [
      { AttributeName: pk, KeyType: 'HASH' as const },
      { AttributeName: sk, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: 'ALL' as const },
  });
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [s('pk'), s('sk'), s('gsi1pk'), s('gsi1sk'), s('gsi2pk'), s('gsi2sk')],
    KeySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [gsi(GSI_BY_WORKFLOW, 'gsi1pk', 'gsi1sk'), gsi(GSI_BY_STATUS, 'gsi2pk', 'gsi2sk')],
  };
}

/** The TTL attribute (epoch seconds) on idempotency records and blobs; the CDK stack enables it. */
export const TTL_ATTRIBUTE = 'ttl';

/**
 * Creates the runtime table (with its indexes) if it does not exist and waits until it is ACTIVE.
 * Returns the names of the tables it created (empty when everything was there already).
 */
export async function ensureTables(client: DynamoDBClient, tableName: string): Promise<string[]> {
  const created: string[] = [];
  try {
    await client.send(new CreateTableCommand(tableDefinition(tableName)));
    created.push(tableName);
  } catch (e) {
    if ((e as { name?: string }).name !== 'ResourceInUseException') throw e;
  }
  for (let i = 0; i < 600; i++) {
    const d = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const gsisActive = (d.Table?.GlobalSecondaryIndexes ?? []).every((g) => g.IndexStatus === undefined || g.IndexStatus === 'ACTIVE');
    if (d.Table?.TableStatus === 'ACTIVE' && gsisActive) return created;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`table ${tableName} did not become ACTIVE`);
}
