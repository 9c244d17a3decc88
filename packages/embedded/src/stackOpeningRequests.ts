import type { StoreAnswer, StoreRequest } from './startDynaliteWorker.js';

/** Where the stack keeps the generation of its owner (RuntimeConfig.leaseEpoch) in its own table. */
export const LEASE_EPOCH_KEY = { pk: { S: 'STACK#embedded' }, sk: { S: 'LEASE_EPOCH' } } as const;
/** Where the stack keeps its identity in its own table (stackIdentity in EmbeddedStack.ts reads it). */
export const IDENTITY_KEY = { pk: { S: 'STACK#embedded' }, sk: { S: 'IDENTITY' } } as const;

/** The next owner generation: one atomic counter, incremented by each process that comes to own the stack. */
export function nextEpochUpdate(tableName: string) {
  return {
    TableName: tableName,
    Key: LEASE_EPOCH_KEY,
    UpdateExpression: 'ADD epoch :one',
    ExpressionAttributeValues: { ':one': { N: '1' } },
    ReturnValues: 'UPDATED_NEW' as const,
  };
}

/** The stack's identity item: its id and, on disk, the project it belongs to. */
export function identityPut(tableName: string, stackId: string, project: string | undefined) {
  return {
    TableName: tableName,
    Item: { ...IDENTITY_KEY, stackId: { S: stackId }, ...(project !== undefined ? { project: { S: project } } : {}) },
  };
}

/**
 * The requests an owner's store answers as soon as it opens, on dynalite's thread, while the owner
 * starts its engine: the table's description, then the two writes every owner makes (the next
 * lease epoch, the stack's identity). On a store that has the table, ACTIVE, that is all the
 * opening asks of it; openingEpoch says whether it was.
 */
export function stackOpeningRequests(tableName: string, stackId: string, project: string | undefined): StoreRequest[] {
  const op = (name: string, input: object): StoreRequest => ({ target: `DynamoDB_20120810.${name}`, body: JSON.stringify(input) });
  return [
    op('DescribeTable', { TableName: tableName }),
    op('UpdateItem', nextEpochUpdate(tableName)),
    op('PutItem', identityPut(tableName, stackId, project)),
  ];
}

/**
 * The lease epoch the opening requests drew, when all three went through on a table that was
 * there and ready (ACTIVE, every index ACTIVE, as ensureTables waits for); undefined otherwise
 * (a new store has no table, so its writes failed): the owner then creates the table and makes
 * the two writes itself. An epoch drawn by a write that counts for nothing is skipped, which is
 * harmless: only its order matters.
 */
export function openingEpoch(answers: readonly StoreAnswer[]): number | undefined {
  const [describe, epoch, identity] = answers;
  if (describe?.statusCode !== 200 || epoch?.statusCode !== 200 || identity?.statusCode !== 200) return undefined;
  const table = (JSON.parse(describe.body) as { Table?: { TableStatus?: string; GlobalSecondaryIndexes?: { IndexStatus?: string }[] } })
    .Table;
  const ready =
    table?.TableStatus === 'ACTIVE' &&
    (table.GlobalSecondaryIndexes ?? []).every((g) => g.IndexStatus === undefined || g.IndexStatus === 'ACTIVE');
  if (!ready) return undefined;
  const n = Number((JSON.parse(epoch.body) as { Attributes?: { epoch?: { N?: string } } }).Attributes?.epoch?.N);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}
