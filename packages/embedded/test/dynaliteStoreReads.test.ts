// The on-disk store's reads are synchronous on the worker's thread (dynaliteWorker.cjs): what
// dynalite's conditions, its index upkeep and GetItem see must be what the asynchronous reads saw,
// a write followed at once by a read of it included, and under writes in flight at the same time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackDynamoClients } from '../src/loopbackClients.js';
import { startDynaliteWorker, type DynaliteWorker } from '../src/startDynaliteWorker.js';

describe('dynalite on disk: reads', () => {
  let path: string;
  let worker: DynaliteWorker;
  let db: DynamoDBClient;

  beforeAll(async () => {
    path = mkdtempSync(join(tmpdir(), 'sf-store-reads-'));
    worker = await startDynaliteWorker('127.0.0.1', { path, createTableMs: 0 });
    db = loopbackDynamoClients(worker.endpoint, { accessKeyId: 'local', secretAccessKey: 'local' }).dynamodbCommands;
    await db.send(
      new CreateTableCommand({
        TableName: 'items',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
          { AttributeName: 'status', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: 'byStatus',
            KeySchema: [
              { AttributeName: 'status', KeyType: 'HASH' },
              { AttributeName: 'pk', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
        ],
      }),
    );
    for (let i = 0; i < 200 && (await db.send(new DescribeTableCommand({ TableName: 'items' }))).Table?.TableStatus !== 'ACTIVE'; i++)
      await new Promise((r) => setTimeout(r, 10));
  });
  afterAll(async () => {
    db?.destroy();
    await worker?.close();
    rmSync(path, { recursive: true, force: true });
  });

  const key = (pk: string) => ({ pk: { S: pk }, sk: { S: 'x' } });

  it('a missing item reads as none, and a write is read back at once', async () => {
    expect((await db.send(new GetItemCommand({ TableName: 'items', Key: key('missing'), ConsistentRead: true }))).Item).toBeUndefined();
    await db.send(new PutItemCommand({ TableName: 'items', Item: { ...key('a'), status: { S: 'RUNNING' }, n: { N: '1' } } }));
    const got = await db.send(new GetItemCommand({ TableName: 'items', Key: key('a'), ConsistentRead: true }));
    expect(got.Item).toEqual({ ...key('a'), status: { S: 'RUNNING' }, n: { N: '1' } });
  });

  it('a conditional put sees the item it must not overwrite, and the refusal carries it', async () => {
    await db.send(
      new PutItemCommand({
        TableName: 'items',
        Item: { ...key('once'), v: { S: 'first' } },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    const refused = await db
      .send(
        new PutItemCommand({
          TableName: 'items',
          Item: { ...key('once'), v: { S: 'second' } },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      )
      .catch((e: unknown) => e as Error);
    expect((refused as Error).name).toBe('ConditionalCheckFailedException');
    const kept = await db.send(new GetItemCommand({ TableName: 'items', Key: key('once'), ConsistentRead: true }));
    expect(kept.Item).toEqual({ ...key('once'), v: { S: 'first' } });
  });

  it('of many conditional puts of one key sent at once, exactly one wins', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        db.send(
          new PutItemCommand({
            TableName: 'items',
            Item: { ...key('race'), by: { N: String(i) } },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const losers = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(losers.map((r) => (r.reason as Error).name)).toEqual(Array(19).fill('ConditionalCheckFailedException'));
  });

  it('an update reads the item it changes, and the index follows it', async () => {
    const updated = await db.send(
      new UpdateItemCommand({
        TableName: 'items',
        Key: key('a'),
        UpdateExpression: 'SET #s = :s, n = n + :one',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':s': { S: 'SUCCEEDED' }, ':one': { N: '1' } },
        ReturnValues: 'ALL_NEW',
      }),
    );
    expect(updated.Attributes).toEqual({ ...key('a'), status: { S: 'SUCCEEDED' }, n: { N: '2' } });
    const byStatus = async (s: string) =>
      (
        await db.send(
          new QueryCommand({
            TableName: 'items',
            IndexName: 'byStatus',
            KeyConditionExpression: '#s = :s',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':s': { S: s } },
          }),
        )
      ).Items ?? [];
    expect((await byStatus('SUCCEEDED')).map((i) => i.pk?.S)).toEqual(['a']);
    expect(await byStatus('RUNNING')).toEqual([]);
    const missing = await db
      .send(
        new UpdateItemCommand({
          TableName: 'items',
          Key: key('nobody'),
          UpdateExpression: 'SET v = :v',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':v': { S: 'x' } },
        }),
      )
      .catch((e: unknown) => e as Error);
    expect((missing as Error).name).toBe('ConditionalCheckFailedException');
  });

  it('keeps what it wrote across a reopen', async () => {
    await worker.close();
    db.destroy();
    worker = await startDynaliteWorker('127.0.0.1', { path });
    db = loopbackDynamoClients(worker.endpoint, { accessKeyId: 'local', secretAccessKey: 'local' }).dynamodbCommands;
    const got = await db.send(new GetItemCommand({ TableName: 'items', Key: key('once'), ConsistentRead: true }));
    expect(got.Item).toEqual({ ...key('once'), v: { S: 'first' } });
  });
});
