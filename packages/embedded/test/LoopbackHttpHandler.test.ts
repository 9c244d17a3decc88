import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConditionalCheckFailedException, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { startDynaliteWorker, type DynaliteWorker } from '../src/startDynaliteWorker.js';
import { LoopbackHttpHandler, buildQueryString } from '../src/LoopbackHttpHandler.js';
import { ensureTables } from '@stepforge/runtime';
import { startRecordingServer, type RecordingServer } from './support/recordingServer.js';

let rec: RecordingServer;
let port: number;
beforeAll(async () => {
  rec = await startRecordingServer((req, res) => {
    if (req.url.startsWith('/slow')) return; // never answers
    if (req.url.startsWith('/drop')) {
      res.socket?.destroy();
      return;
    } // closes the connection instead
    res.setHeader('x-multi', ['a', 'b']);
    res.setHeader('content-type', 'application/x-amz-json-1.0');
    res.statusCode = req.url.startsWith('/missing') ? 404 : 200;
    res.end(JSON.stringify({ echo: req.body }));
  });
  port = rec.port;
});
afterAll(() => rec.close());

const request = (over: Partial<Parameters<LoopbackHttpHandler['handle']>[0]> = {}) => ({
  protocol: 'http:',
  hostname: '127.0.0.1',
  port,
  method: 'POST',
  path: '/',
  headers: { 'content-type': 'application/x-amz-json-1.0', host: `127.0.0.1:${port}` },
  body: '{"a":1}',
  ...over,
});

describe('Class: LoopbackHttpHandler', () => {
  describe('Method: handle', () => {
    it('sends the method, path, query, headers and body, and returns status, headers and the body as bytes', async () => {
      const h = new LoopbackHttpHandler();
      try {
        const { response } = await h.handle(
          request({
            path: '/p',
            query: { b: '2 3', a: ['x', 'y'] },
            headers: { 'x-amz-target': 'DynamoDB_20120810.PutItem', host: `127.0.0.1:${port}` },
          }),
        );
        const last = rec.seen.at(-1)!;
        expect(last).toMatchObject({ method: 'POST', url: '/p?a=x&a=y&b=2%203', body: '{"a":1}' });
        expect(last.headers['x-amz-target']).toBe('DynamoDB_20120810.PutItem');
        expect(response.statusCode).toBe(200);
        expect(response.headers['x-multi']).toBe('a, b');
        expect(response.body).toBeInstanceOf(Uint8Array);
        expect(JSON.parse(Buffer.from(response.body).toString('utf8'))).toEqual({ echo: '{"a":1}' });
        const notFound = await h.handle(request({ path: '/missing', method: 'GET', body: undefined }));
        expect(notFound.response.statusCode).toBe(404);
      } finally {
        h.destroy();
      }
    });

    it('does not send Expect: 100-continue (a loopback peer answers the whole request at once)', async () => {
      const h = new LoopbackHttpHandler();
      try {
        const { response } = await h.handle(request({ headers: { host: `127.0.0.1:${port}`, Expect: '100-continue', 'x-kept': 'yes' } }));
        expect(response.statusCode).toBe(200);
        expect(rec.seen.at(-1)!.headers.expect).toBeUndefined();
        expect(rec.seen.at(-1)!.headers['x-kept']).toBe('yes');
      } finally {
        h.destroy();
      }
    });

    it('keeps connections alive from one request to the next', async () => {
      const h = new LoopbackHttpHandler();
      const sockets = new Set<unknown>();
      const onConnection = (s: unknown) => sockets.add(s);
      rec.server.on('connection', onConnection);
      try {
        for (let i = 0; i < 20; i++) await h.handle(request());
        // The pool may open a second connection for a request sent while the first connection is
        // still finishing the previous response; it never opens one per request.
        expect(sockets.size).toBeGreaterThanOrEqual(1);
        expect(sockets.size).toBeLessThanOrEqual(2);
      } finally {
        rec.server.off('connection', onConnection);
        h.destroy();
      }
    });

    it('fails with TimeoutError after requestTimeout, and with AbortError when aborted', async () => {
      const h = new LoopbackHttpHandler();
      try {
        const timedOut = await h.handle(request({ path: '/slow1' }), { requestTimeout: 50 }).catch((e: Error) => e);
        expect((timedOut as Error).name).toBe('TimeoutError');
        const ac = new AbortController();
        const pending = h.handle(request({ path: '/slow2' }), { abortSignal: ac.signal }).catch((e: Error) => e);
        setTimeout(() => ac.abort(), 20);
        expect(((await pending) as Error).name).toBe('AbortError');
        const already = await h.handle(request(), { abortSignal: ac.signal }).catch((e: Error) => e);
        expect((already as Error).name).toBe('AbortError');
      } finally {
        h.destroy();
      }
    });

    it('passes connection errors on and refuses https', async () => {
      const h = new LoopbackHttpHandler();
      try {
        const refused = await h.handle(request({ port: 1 })).catch((e: NodeJS.ErrnoException) => e);
        expect((refused as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
        await expect(h.handle(request({ protocol: 'https:' }))).rejects.toThrow('LoopbackHttpHandler speaks plain http only, not https:');
        // A connection the server closes under a request is ECONNRESET, which the SDK retries.
        const dropped = await h.handle(request({ path: '/drop' })).catch((e: NodeJS.ErrnoException) => e);
        expect((dropped as NodeJS.ErrnoException).code).toBe('ECONNRESET');
        expect((await h.handle(request())).response.statusCode).toBe(200);
      } finally {
        h.destroy();
      }
    });
  });

  describe('Function: buildQueryString', () => {
    it('builds the query as the SDK does: sorted keys, RFC 3986 escapes, repeated keys, bare keys', () => {
      expect(buildQueryString({ z: "it's (a) *", a: ['1', '2'], k: null, e: '' })).toBe('a=1&a=2&e=&k&z=it%27s%20%28a%29%20%2A');
    });
  });

  describe('with the DynamoDB client and dynalite', () => {
    let dynalite: DynaliteWorker;
    let client: DynamoDBClient;
    beforeAll(async () => {
      dynalite = await startDynaliteWorker('127.0.0.1', { createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
      client = new DynamoDBClient({
        endpoint: dynalite.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        requestHandler: new LoopbackHttpHandler(),
      });
      await ensureTables(client, 'loopback');
    });
    afterAll(async () => {
      client.destroy();
      await dynalite.close();
    });

    it('signs, sends and parses items and service errors as with the default handler', async () => {
      const Item = { pk: { S: 'RUN#1' }, sk: { S: '#RUN' }, n: { N: '3' }, m: { M: { s: { S: 'x' } } } };
      await client.send(new PutItemCommand({ TableName: 'loopback', Item, ConditionExpression: 'attribute_not_exists(pk)' }));
      const got = await client.send(new GetItemCommand({ TableName: 'loopback', Key: { pk: Item.pk, sk: Item.sk }, ConsistentRead: true }));
      expect(got.Item).toEqual(Item);
      const err = await client
        .send(new PutItemCommand({ TableName: 'loopback', Item, ConditionExpression: 'attribute_not_exists(pk)' }))
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConditionalCheckFailedException);
      expect((err as Error).name).toBe('ConditionalCheckFailedException');
      expect((err as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode).toBe(400);
    });
  });
});
