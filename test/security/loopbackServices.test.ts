import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import aws4 from 'aws4';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { ListQueuesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { ListStateMachinesCommand, SFNClient } from '@aws-sdk/client-sfn';
import { openStack, EMBEDDED_TABLE, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../../packages/embedded/src/RunService.js';
import { startServe, type ServeHandle } from '../../packages/cli/src/commands/serve.js';
import { bufferIo, tempProject } from '../e2e/support/testIo.js';

/** What came back from a raw request: status, headers, body text. */
interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/** A raw HTTP request, so that Host, Origin and the signature are exactly what an attacker sends. */
function raw(
  endpoint: string,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: string },
): Promise<Answer> {
  const url = new URL(endpoint);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: options.method ?? 'POST',
        path: options.path ?? '/',
        headers: { host: url.host, ...options.headers },
      },
      (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (c: string) => (text += c))
          .on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject).end(options.body);
  });
}

/** The AWS error type an SDK call failed with (`ok` when it did not fail). */
async function errorOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return (e as Error).name;
  }
}

const SERVICES = [
  { name: 'DynamoDB (dynalite)', key: 'dynamodbEndpoint', service: 'dynamodb', target: 'DynamoDB_20120810.PutItem' },
  { name: 'SQS (fauxqs)', key: 'sqsEndpoint', service: 'sqs', target: 'AmazonSQS.ListQueues' },
  { name: 'Step Functions (engine)', key: 'sfnEndpoint', service: 'states', target: 'AWSStepFunctions.ListStateMachines' },
] as const;

/**
 * Every loopback service of the embedded stack, attacked the ways a web page in the user's
 * browser, or another program of the machine without the project's secret, can: each attempt must
 * be refused before the service acts, and the project's own signed clients must still work.
 */
describe('Security: the loopback services of the embedded stack', () => {
  const project = tempProject('sf-sec-loop-');
  let stack: EmbeddedStack;
  let serve: ServeHandle;
  let attacks = 0;
  let refused = 0;
  /** One attack: refused when `ok` says the answer is a refusal. */
  const attack = (what: string, ok: boolean) => {
    attacks++;
    if (ok) refused++;
    return [what, ok];
  };
  // A forged approval record: what a page would write to redirect an approved call.
  const forged = JSON.stringify({
    TableName: EMBEDDED_TABLE,
    Item: { pk: { S: 'APPROVAL#forged' }, sk: { S: 'APPROVAL' }, call: { S: '/pay/FORGED' } },
  });

  beforeAll(async () => {
    stack = await openStack({ projectDir: project.dir, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
    serve = await startServe(bufferIo(project.dir), new EmbeddedRunService(stack, project.dir), 0);
  });
  afterAll(async () => {
    await serve.close();
    await stack.close();
    project.remove();
    console.log(`security: loopback services — ${refused}/${attacks} attacks refused`);
  });

  it('writes the stack secret to .stepforge/stack.json readable by its owner only (0600, folder 0700)', () => {
    const file = join(project.dir, '.stepforge', 'stack.json');
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
    expect((statSync(join(project.dir, '.stepforge')).mode & 0o777).toString(8)).toBe('700');
    const published = JSON.parse(readFileSync(file, 'utf8')) as {
      credentials: { accessKeyId: string; secretAccessKey: string };
      apiToken: string;
    };
    expect(published.credentials).toEqual(stack.endpoints.credentials);
    expect(published.credentials.secretAccessKey.length).toBeGreaterThanOrEqual(40);
    expect(published.apiToken).toBe(serve.token);
  });

  for (const svc of SERVICES) {
    describe(`Service: ${svc.name}`, () => {
      const endpoint = () => stack.endpoints[svc.key];
      const json = { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': svc.target };

      it('refuses a web page: a cross-site simple POST, a CORS preflight, a rebound Host; and sends no CORS header', async () => {
        const page = await raw(endpoint(), {
          headers: { origin: 'https://attacker.example', 'content-type': 'text/plain', 'x-amz-target': svc.target },
          body: forged,
        });
        const preflight = await raw(endpoint(), {
          method: 'OPTIONS',
          headers: {
            origin: 'https://attacker.example',
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'x-amz-target,content-type',
          },
        });
        const loopbackPage = await raw(endpoint(), { headers: { origin: 'http://localhost:3000', ...json }, body: '{}' });
        const fetchMetadata = await raw(endpoint(), {
          headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', ...json },
          body: '{}',
        });
        const rebound = await raw(endpoint(), {
          headers: { host: `rebind.attacker.example:${new URL(endpoint()).port}`, ...json },
          body: '{}',
        });
        const results = [
          attack('cross-site POST', page.status === 403),
          attack('preflight', preflight.status === 403),
          attack('page on another loopback port', loopbackPage.status === 403),
          attack('fetch metadata without Origin', fetchMetadata.status === 403),
          attack('DNS rebinding', rebound.status === 403),
        ];
        expect(results).toEqual(results.map(([w]) => [w, true]));
        for (const a of [page, preflight, loopbackPage, rebound]) {
          expect(Object.keys(a.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
          expect(JSON.parse(a.text).__type).toBe('AccessDeniedException');
        }
        expect(JSON.parse(page.text).message).toBe(
          "requests from web pages are refused (Origin: https://attacker.example): this is a service of the project's embedded stack, for the project's own processes only",
        );
        expect(JSON.parse(rebound.text).message).toContain(
          `the Host header 'rebind.attacker.example:${new URL(endpoint()).port}' is not this service's address (127.0.0.1:${new URL(endpoint()).port} or localhost:${new URL(endpoint()).port})`,
        );
      });

      it('refuses an unsigned request, a forged signature, a wrong secret, and a body altered after signing', async () => {
        const url = new URL(endpoint());
        const unsigned = await raw(endpoint(), { headers: json, body: forged });
        // What the stack's clients sent before it had a secret: a well-formed signature by "local".
        const byLocal = aws4.sign(
          { service: svc.service, region: 'us-east-1', method: 'POST', host: url.host, path: '/', headers: { ...json }, body: forged },
          { accessKeyId: 'local', secretAccessKey: 'local' },
        );
        const wrongSecret = aws4.sign(
          { service: svc.service, region: 'us-east-1', method: 'POST', host: url.host, path: '/', headers: { ...json }, body: forged },
          { accessKeyId: stack.endpoints.credentials.accessKeyId, secretAccessKey: 'guessed' },
        );
        const signed = aws4.sign(
          { service: svc.service, region: 'us-east-1', method: 'POST', host: url.host, path: '/', headers: { ...json }, body: '{}' },
          stack.endpoints.credentials,
        );
        const asRaw = (s: { headers?: Record<string, unknown> }) =>
          Object.fromEntries(Object.entries(s.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
        const local = await raw(endpoint(), { headers: asRaw(byLocal), body: forged });
        const guessed = await raw(endpoint(), { headers: asRaw(wrongSecret), body: forged });
        const { 'content-length': _len, ...tamperedHeaders } = asRaw(signed);
        const tampered = await raw(endpoint(), { headers: tamperedHeaders, body: forged });
        const results = [
          attack('unsigned', unsigned.status === 403 && JSON.parse(unsigned.text).__type === 'MissingAuthenticationTokenException'),
          attack('signed by another key', local.status === 403 && JSON.parse(local.text).__type === 'UnrecognizedClientException'),
          attack('wrong secret', guessed.status === 403 && JSON.parse(guessed.text).__type === 'InvalidSignatureException'),
          attack('body altered after signing', tampered.status === 403 && JSON.parse(tampered.text).__type === 'InvalidSignatureException'),
        ];
        expect(results).toEqual(results.map(([w]) => [w, true]));
        expect(JSON.parse(unsigned.text).message).toBe(
          "the request is not signed: sign requests with the stack's credentials (the AWS SDK does, given the accessKeyId and secretAccessKey in .stepforge/stack.json)",
        );
      });
    });
  }

  it("leaves the stored records as they were, and answers the project's own SDK clients (signed with stack.json's credentials)", async () => {
    const credentials = stack.endpoints.credentials;
    const ddb = new DynamoDBClient({ endpoint: stack.endpoints.dynamodbEndpoint, region: 'us-east-1', credentials });
    const sqs = new SQSClient({ endpoint: stack.endpoints.sqsEndpoint, region: 'us-east-1', credentials });
    const sfn = new SFNClient({ endpoint: stack.endpoints.sfnEndpoint, region: 'us-east-1', credentials });
    const foreign = new DynamoDBClient({
      endpoint: stack.endpoints.dynamodbEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    try {
      const key = { pk: { S: 'APPROVAL#forged' }, sk: { S: 'APPROVAL' } };
      expect((await ddb.send(new GetItemCommand({ TableName: EMBEDDED_TABLE, Key: key }))).Item).toBeUndefined();
      expect(
        await errorOf(foreign.send(new PutItemCommand({ TableName: EMBEDDED_TABLE, Item: { ...key, call: { S: '/pay/FORGED' } } }))),
      ).toBe('UnrecognizedClientException');
      expect((await ddb.send(new GetItemCommand({ TableName: EMBEDDED_TABLE, Key: key }))).Item).toBeUndefined();
      expect(await errorOf(sqs.send(new ListQueuesCommand({})))).toBe('ok');
      const queueUrl = (await sqs.send(new ListQueuesCommand({}))).QueueUrls?.[0];
      expect(await errorOf(sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'ping' })))).toBe('ok');
      expect(await errorOf(sfn.send(new ListStateMachinesCommand({})))).toBe('ok');
    } finally {
      for (const c of [ddb, sqs, sfn, foreign]) c.destroy();
    }
  });

  describe('Service: serve (the HTTP API and its Step Functions pass-through)', () => {
    it('refuses a cross-site page, a request without the token or with another, and an unsigned Step Functions call', async () => {
      const port = new URL(serve.url).port;
      const page = await raw(serve.url, {
        path: '/workflows',
        method: 'GET',
        headers: { origin: 'https://attacker.example', authorization: `Bearer ${serve.token}` },
      });
      const none = await raw(serve.url, { path: '/approvals', method: 'GET' });
      const other = await raw(serve.url, { path: '/approvals', method: 'GET', headers: { authorization: 'Bearer guessed' } });
      const sfnUnsigned = await raw(serve.url, {
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AWSStepFunctions.ListStateMachines' },
        body: '{}',
      });
      const results = [
        attack('serve: cross-site page', page.status === 403),
        attack('serve: no token', none.status === 401 && JSON.parse(none.text).error.code === 'unauthorized'),
        attack('serve: another token', other.status === 401 && JSON.parse(other.text).error.code === 'unauthorized'),
        attack(
          'serve: unsigned Step Functions call',
          sfnUnsigned.status === 403 && JSON.parse(sfnUnsigned.text).__type === 'MissingAuthenticationTokenException',
        ),
      ];
      expect(results).toEqual(results.map(([w]) => [w, true]));
      expect(JSON.parse(none.text).error.message).toBe(
        'this API needs its token: send Authorization: Bearer <token>, with the token from apiToken in .stepforge/stack.json (readable by the user who runs serve only)',
      );
      expect(none.headers['www-authenticate']).toBe('Bearer realm="stepforge"');
      // The token and the stack's credentials open it.
      const ok = await raw(serve.url, {
        path: '/approvals',
        method: 'GET',
        headers: { host: `localhost:${port}`, authorization: `Bearer ${serve.token}` },
      });
      expect([ok.status, JSON.parse(ok.text)]).toEqual([200, { approvals: [] }]);
      const sfn = new SFNClient({ endpoint: serve.url, region: 'us-east-1', credentials: stack.endpoints.credentials });
      try {
        expect(await errorOf(sfn.send(new ListStateMachinesCommand({})))).toBe('ok');
      } finally {
        sfn.destroy();
      }
    });
  });
});
