import { describe, it, expect } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { request as httpRequest } from 'node:http';
import { networkInterfaces } from 'node:os';
import { DynamoDBClient, CreateTableCommand, DescribeTableCommand, PutItemCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { SQSClient, CreateQueueCommand, GetQueueUrlCommand, SendMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { startEmulators } from '../src/startEmulators.js';

const creds = { accessKeyId: 'local', secretAccessKey: 'local' };

/** This machine's first address that is not loopback, if it has one. */
const outsideAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a !== undefined && !a.internal && a.family === 'IPv4')?.address;

/** What connecting to host:port gives: 'connected', or the error code. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port }, () => {
      socket.destroy();
      resolve('connected');
    });
    socket.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

describe('Function: startEmulators', () => {
  it('serves DynamoDB that persists on disk across restarts, and SQS, on loopback', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-emu-'));
    try {
      const first = await startEmulators({ dataDir: dir, credentials: creds });
      expect(first.dynamodbEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const ddb = new DynamoDBClient({ endpoint: first.dynamodbEndpoint, region: 'us-east-1', credentials: creds });
      await ddb.send(
        new CreateTableCommand({
          TableName: 'items',
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        }),
      );
      // As on DynamoDB, a table takes writes once ACTIVE (dynalite runs in its own thread, so the
      // next request can arrive before it gets there).
      for (let i = 0; i < 200; i++) {
        const t = await ddb.send(new DescribeTableCommand({ TableName: 'items' }));
        if (t.Table?.TableStatus === 'ACTIVE') break;
        await new Promise((r) => setTimeout(r, 10));
      }
      await ddb.send(new PutItemCommand({ TableName: 'items', Item: { pk: { S: 'a' }, v: { N: '1' } } }));
      const sqs = new SQSClient({ endpoint: first.sqsEndpoint, region: 'us-east-1', credentials: creds });
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'q' }));
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'hello' }));
      const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 0 }));
      expect(got.Messages?.[0]?.Body).toBe('hello');
      ddb.destroy();
      sqs.destroy();
      await first.close();

      const second = await startEmulators({ dataDir: dir, credentials: creds });
      const ddb2 = new DynamoDBClient({ endpoint: second.dynamodbEndpoint, region: 'us-east-1', credentials: creds });
      const item = await ddb2.send(new GetItemCommand({ TableName: 'items', Key: { pk: { S: 'a' } } }));
      expect(item.Item?.v?.N).toBe('1');
      ddb2.destroy();
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('loads the SQS emulator on its first request only, with the queues it was given there at the URLs handed out before', async () => {
    const emulators = await startEmulators({ credentials: creds, queues: ['approvals'] });
    const sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region: 'us-east-1', credentials: creds });
    try {
      const url = emulators.sqsQueueUrl('approvals');
      expect(url).toBe(`http://sqs.us-east-1.localhost:${new URL(emulators.sqsEndpoint).port}/000000000000/approvals`);
      expect(emulators.sqsLoaded).toBe(false);
      // The first request (a message to the given queue) waits for fauxqs to load, and finds the queue.
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'first' }));
      expect(emulators.sqsLoaded).toBe(true);
      expect((await sqs.send(new GetQueueUrlCommand({ QueueName: 'approvals' }))).QueueUrl).toBe(url);
      expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 0 }))).Messages?.map((m) => m.Body)).toEqual([
        'first',
      ]);
      // Unsigned requests are still refused before fauxqs sees them.
      const unsigned = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
        const req = httpRequest(
          emulators.sqsEndpoint,
          { method: 'POST', headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.ListQueues' } },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode, body }));
          },
        );
        req.on('error', reject);
        req.end('{}');
      });
      expect(unsigned.status).toBe(403);
      expect((JSON.parse(unsigned.body) as { __type: string }).__type).toBe('MissingAuthenticationTokenException');
    } finally {
      sqs.destroy();
      await emulators.close();
    }
  });

  // fauxqs's own startFauxqs listens on 0.0.0.0 whatever host it is given (startSqsEmulator).
  it.skipIf(outsideAddress === undefined)("listens on loopback only, not on the machine's other addresses", async () => {
    const emulators = await startEmulators({ credentials: creds });
    try {
      const ports = [emulators.dynamodbEndpoint, emulators.sqsEndpoint].map((e) => Number(new URL(e).port));
      expect(await Promise.all(ports.map((p) => tryConnect('127.0.0.1', p)))).toEqual(['connected', 'connected']);
      expect(await Promise.all(ports.map((p) => tryConnect(outsideAddress!, p)))).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
    } finally {
      await emulators.close();
    }
  });
});
