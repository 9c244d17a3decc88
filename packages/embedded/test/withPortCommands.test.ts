// The owner's commands client sends its item operations to the dynalite worker as plain JSON, past
// the SDK's serializer and signer: what it gets back (outputs, bytes, errors) must be what the SDK's
// own path over HTTP gives for the same calls on the same store.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBServiceException,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { loopbackDynamoClients } from '../src/loopbackClients.js';
import { startDynaliteWorker, type DynaliteWorker } from '../src/startDynaliteWorker.js';

const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
/** An address nothing listens on: a client that still gets answers did not use HTTP. */
const NOWHERE = 'http://127.0.0.1:9';

/** What a call gave: its output without the request id, or its error's identity and fields. */
async function outcome(client: DynamoDBClient, command: object): Promise<unknown> {
  try {
    const send = client.send.bind(client) as unknown as (c: object) => Promise<{ $metadata: Record<string, unknown> }>;
    const out = await send(command);
    const { requestId, ...meta } = out.$metadata;
    return { ok: { ...out, $metadata: { ...meta, requestId: typeof requestId } } };
  } catch (e) {
    const err = e as Error & Record<string, unknown>;
    const { requestId, ...meta } = err.$metadata as Record<string, unknown>;
    return {
      error: {
        class: err.constructor.name,
        name: err.name,
        message: err.message,
        $fault: err.$fault,
        $metadata: { httpStatusCode: meta.httpStatusCode, requestId: typeof requestId },
        CancellationReasons: err.CancellationReasons,
        Item: err.Item,
        serviceException: e instanceof DynamoDBServiceException,
      },
    };
  }
}

describe('Function: withPortCommands', () => {
  let worker: DynaliteWorker;
  let port: ReturnType<typeof loopbackDynamoClients>;
  let http: ReturnType<typeof loopbackDynamoClients>;
  beforeAll(async () => {
    worker = await startDynaliteWorker('127.0.0.1', { createTableMs: 0 });
    port = loopbackDynamoClients(NOWHERE, CREDENTIALS, () => worker.connect());
    http = loopbackDynamoClients(worker.endpoint, CREDENTIALS);
    await http.dynamodbCommands.send(
      new CreateTableCommand({
        TableName: 'items',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
      }),
    );
  });
  afterAll(async () => {
    for (const c of [port, http]) {
      c.dynamodb.destroy();
      c.dynamodbCommands.destroy();
    }
    await worker.close();
  });

  it('writes and reads items as the SDK does, bytes and nested values included', async () => {
    const item = {
      pk: { S: 'run' },
      sk: { S: 'a' },
      n: { N: '1.5' },
      bytes: { B: new Uint8Array([0, 1, 2, 250, 255]) },
      byteSet: { BS: [new Uint8Array([1]), new Uint8Array([2, 3])] },
      nested: { M: { B: { S: 'a map key named B is not bytes' }, list: { L: [{ BOOL: true }, { NULL: true }, { SS: ['x', 'y'] }] } } },
    };
    // The SDK's transport is not used for item operations: nothing reaches its request handler.
    const sdkTransport = vi.spyOn(port.dynamodbCommands.config.requestHandler as { handle(...a: unknown[]): unknown }, 'handle');
    // Written by the port path, read by both: the stored item is the one the SDK would have stored.
    expect(await outcome(port.dynamodbCommands, new PutItemCommand({ TableName: 'items', Item: item }))).toEqual({
      ok: { $metadata: { httpStatusCode: 200, requestId: 'string', attempts: 1, totalRetryDelay: 0 } },
    });
    const get = new GetItemCommand({ TableName: 'items', Key: { pk: { S: 'run' }, sk: { S: 'a' } }, ConsistentRead: true });
    const viaPort = await outcome(port.dynamodbCommands, get);
    expect(viaPort).toEqual(await outcome(http.dynamodbCommands, get));
    expect((viaPort as { ok: { Item: unknown } }).ok.Item).toEqual(item);
    expect(((viaPort as { ok: { Item: { bytes: { B: unknown } } } }).ok.Item.bytes.B as Uint8Array).constructor).toBe(Uint8Array);

    const update = (sk: string) =>
      new UpdateItemCommand({
        TableName: 'items',
        Key: { pk: { S: 'run' }, sk: { S: sk } },
        UpdateExpression: 'SET #v = :v',
        ExpressionAttributeNames: { '#v': 'v' },
        ExpressionAttributeValues: { ':v': { B: new Uint8Array([9, 8]) } },
        ReturnValues: 'ALL_NEW',
      });
    expect(await outcome(port.dynamodbCommands, update('u'))).toEqual(await outcome(http.dynamodbCommands, update('u')));
    const query = new QueryCommand({
      TableName: 'items',
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: 'run' } },
      Limit: 1,
    });
    expect(await outcome(port.dynamodbCommands, query)).toEqual(await outcome(http.dynamodbCommands, query));
    expect(sdkTransport).not.toHaveBeenCalled();
    sdkTransport.mockRestore();
  });

  it("throws dynalite's refusals as the SDK's errors: the modelled class by name, or the generic one", async () => {
    await http.dynamodbCommands.send(new PutItemCommand({ TableName: 'items', Item: { pk: { S: 'c' }, sk: { S: 'c' } } }));
    const conditional = new PutItemCommand({
      TableName: 'items',
      Item: { pk: { S: 'c' }, sk: { S: 'c' } },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    const refused = await outcome(port.dynamodbCommands, conditional);
    expect(refused).toEqual(await outcome(http.dynamodbCommands, conditional));
    expect(refused).toMatchObject({
      error: { class: ConditionalCheckFailedException.name, name: 'ConditionalCheckFailedException', $fault: 'client' },
    });

    const transaction = new TransactWriteItemsCommand({
      TransactItems: [
        { Put: { TableName: 'items', Item: { pk: { S: 'c' }, sk: { S: 'c' } }, ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: 'items', Item: { pk: { S: 'd' }, sk: { S: 'd' } } } },
      ],
    });
    // dynalite 4.0.0 predates transactions: its answer names no message, which the SDK calls UnknownError.
    const unknown = await outcome(port.dynamodbCommands, transaction);
    expect(unknown).toEqual(await outcome(http.dynamodbCommands, transaction));
    expect(unknown).toMatchObject({ error: { name: 'UnknownOperationException', message: 'UnknownError' } });

    // Not modelled by the client (a ValidationException): the generic class, named by the answer.
    const invalid = new GetItemCommand({ TableName: 'items', Key: { pk: { S: 'only half a key' } } });
    const validation = await outcome(port.dynamodbCommands, invalid);
    expect(validation).toEqual(await outcome(http.dynamodbCommands, invalid));
    expect(validation).toMatchObject({
      error: { name: 'ValidationException', $fault: 'client', serviceException: true, $metadata: { httpStatusCode: 400 } },
    });
  });

  it("leaves the table operations, whose answers hold dates, on the SDK's path", async () => {
    const sdkTransport = vi.spyOn(port.dynamodbCommands.config.requestHandler as { handle(...a: unknown[]): unknown }, 'handle');
    const described = await port.dynamodbCommands.send(new DescribeTableCommand({ TableName: 'items' }));
    expect(described.Table?.CreationDateTime).toBeInstanceOf(Date);
    expect(sdkTransport).toHaveBeenCalledTimes(1);
    sdkTransport.mockRestore();
  });
});
