import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  type CreateTableCommandInput,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';

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

/** Options of ensureTables. */
export interface EnsureTablesOptions {
  /**
   * The caller knows the store holds no table yet (it has just created it): the table is created
   * without asking first. Otherwise it is described first, and created only when it is not there.
   */
  readonly absent?: boolean;
}

/**
 * Creates the runtime table (with its indexes) if it does not exist and waits until it is ACTIVE.
 * Returns the names of the tables it created (empty when everything was there already). A table
 * that is there and ACTIVE costs one request (DescribeTable), a new one two or more (CreateTable,
 * then DescribeTable until ACTIVE).
 */
export async function ensureTables(client: DynamoDBClient, tableName: string, options: EnsureTablesOptions = {}): Promise<string[]> {
  const created: string[] = [];
  let described = options.absent ? undefined : await describe(client, tableName);
  if (described === undefined) {
    try {
      await client.send(new CreateTableCommand(tableDefinition(tableName)));
      created.push(tableName);
    } catch (e) {
      if ((e as { name?: string }).name !== 'ResourceInUseException') throw e;
    }
  }
  // Polled soon at first (an emulator makes a table ACTIVE within a tick or two), then every 50 ms.
  for (let i = 0; i < 600; i++) {
    described ??= await describe(client, tableName);
    if (described === undefined) throw new Error(`table ${tableName} was created, then could not be found`);
    const gsisActive = (described.GlobalSecondaryIndexes ?? []).every((g) => g.IndexStatus === undefined || g.IndexStatus === 'ACTIVE');
    if (described.TableStatus === 'ACTIVE' && gsisActive) return created;
    described = undefined;
    await new Promise((r) => setTimeout(r, Math.min(50, 2 ** i)));
  }
  throw new Error(`table ${tableName} did not become ACTIVE`);
}

/** The table's description, or undefined when there is no such table. */
async function describe(client: DynamoDBClient, tableName: string): Promise<TableDescription | undefined> {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (e) {
    if ((e as { name?: string }).name === 'ResourceNotFoundException') return undefined;
    throw e;
  }
}
