// The stack owner's DynamoDB clients reach the dynalite worker over a private MessagePort: the same
// SDK calls and dynalite's own answers (conditions, errors), with no socket in between.
import { describe, expect, it } from 'vitest';
import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { loopbackDynamoClients } from '../src/loopbackClients.js';
import { startDynaliteWorker } from '../src/startDynaliteWorker.js';

const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
/** An address nothing listens on: a client that still gets answers did not use HTTP. */
const NOWHERE = 'http://127.0.0.1:9';

describe('Class: WorkerPortHttpHandler', () => {
  it('carries the SDK requests to dynalite and its answers back, with no HTTP', async () => {
    const w = await startDynaliteWorker('127.0.0.1', { createTableMs: 0 });
    const { dynamodb, dynamodbCommands: db } = loopbackDynamoClients(NOWHERE, CREDENTIALS, () => w.connect());
    try {
      await db.send(
        new CreateTableCommand({
          TableName: 'items',
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        }),
      );
      const put = (v: string) =>
        db.send(
          new PutItemCommand({
            TableName: 'items',
            Item: { pk: { S: 'a' }, v: { S: v } },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
      // Requests in flight at once are told apart by their ids.
      const results = await Promise.allSettled([put('first'), dynamodb.send(new ListTablesCommand({}))]);
      expect(results[0].status).toBe('fulfilled');
      expect(results[1].status === 'fulfilled' && results[1].value.TableNames).toEqual(['items']);
      // dynalite's refusal comes back as the SDK's named error.
      const refused = await put('second').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ConditionalCheckFailedException);
      expect((refused as Error).name).toBe('ConditionalCheckFailedException');
      const got = await dynamodb.send(new GetItemCommand({ TableName: 'items', Key: { pk: { S: 'a' } }, ConsistentRead: true }));
      expect(got.Item).toEqual({ pk: { S: 'a' }, v: { S: 'first' } });
      // The same store is there over HTTP for the project's other processes.
      const http = loopbackDynamoClients(w.endpoint, CREDENTIALS);
      try {
        expect((await http.dynamodbCommands.send(new GetItemCommand({ TableName: 'items', Key: { pk: { S: 'a' } } }))).Item?.v).toEqual({
          S: 'first',
        });
      } finally {
        http.dynamodb.destroy();
        http.dynamodbCommands.destroy();
      }
    } finally {
      dynamodb.destroy();
      db.destroy();
      await w.close();
    }
  });

  it('fails a request once the worker is gone, as a closed connection (ECONNRESET), never waiting for ever', async () => {
    const w = await startDynaliteWorker('127.0.0.1', {});
    const { dynamodb, dynamodbCommands: db } = loopbackDynamoClients(NOWHERE, CREDENTIALS, () => w.connect());
    try {
      expect((await db.send(new ListTablesCommand({}))).TableNames).toEqual([]);
      await w.close();
      const err = await db.send(new ListTablesCommand({})).catch((e: unknown) => e as Error & { code?: string });
      expect(err).toBeInstanceOf(Error);
      expect((err as { code?: string }).code).toBe('ECONNRESET');
    } finally {
      dynamodb.destroy();
      db.destroy();
    }
  });

  it('fails a request sent after the client is destroyed', async () => {
    const w = await startDynaliteWorker('127.0.0.1', {});
    const { dynamodb, dynamodbCommands: db } = loopbackDynamoClients(NOWHERE, CREDENTIALS, () => w.connect());
    try {
      db.destroy();
      const err = await db.send(new ListTablesCommand({})).catch((e: unknown) => e as Error & { code?: string });
      expect((err as { code?: string }).code).toBe('ECONNRESET');
      expect((err as Error).message).toBe('the DynamoDB worker port is closed');
    } finally {
      dynamodb.destroy();
      await w.close();
    }
  });
});
