// The embedded stack's SDK clients still sign every request with SigV4: the signature the server
// receives is recomputed here from the request itself, by an implementation independent of the
// signer's (Aws4HttpSigner over aws4).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DescribeExecutionCommand } from '@aws-sdk/client-sfn';
import { LOOPBACK_REGION, loopbackDynamoClients, loopbackSfnClient } from '../src/loopbackClients.js';

/** The stack's credentials, as a test gives them (a stack makes random ones). */
const LOOPBACK_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
import { expectedSigV4 } from './support/expectedSigV4.js';
import { startRecordingServer, type RecordingServer, type SeenRequest } from './support/recordingServer.js';

let rec: RecordingServer;
let endpoint: string;
beforeAll(async () => {
  rec = await startRecordingServer((req, res) => {
    res.setHeader('content-type', 'application/x-amz-json-1.0');
    res.end(
      String(req.headers['x-amz-target']).startsWith('AWSStepFunctions')
        ? JSON.stringify({ executionArn: 'arn:x', stateMachineArn: 'arn:y', status: 'RUNNING', startDate: 1 })
        : '{}',
    );
  });
  endpoint = rec.url;
});
afterAll(() => rec.close());

const expectedSignature = (r: SeenRequest, service: string) =>
  expectedSigV4(r, { region: LOOPBACK_REGION, service, secretAccessKey: LOOPBACK_CREDENTIALS.secretAccessKey });

describe('Function: loopbackDynamoClients', () => {
  it('signs every request with SigV4 over its headers and body, and sends no user agent', async () => {
    const { dynamodb, dynamodbCommands } = loopbackDynamoClients(endpoint, LOOPBACK_CREDENTIALS);
    try {
      for (const client of [dynamodb, dynamodbCommands]) {
        for (let i = 0; i < 2; i++) {
          await client.send(
            new PutItemCommand({ TableName: 't', Item: { pk: { S: `a${i}` } }, ConditionExpression: 'attribute_not_exists(pk)' }),
          );
          const r = rec.seen.at(-1)!;
          expect(r.headers['x-amz-target']).toBe('DynamoDB_20120810.PutItem');
          expect(String(r.headers.authorization)).toMatch(
            new RegExp(
              `^AWS4-HMAC-SHA256 Credential=local/\\d{8}/us-east-1/dynamodb/aws4_request, SignedHeaders=[^,]*host[^,]*x-amz-date[^,]*, Signature=[0-9a-f]{64}$`,
            ),
          );
          expect(/Signature=([0-9a-f]{64})/.exec(String(r.headers.authorization))![1]).toBe(expectedSignature(r, 'dynamodb'));
          expect(r.headers['user-agent']).toBeUndefined();
          expect(r.headers['x-amz-user-agent']).toBeUndefined();
        }
      }
    } finally {
      dynamodb.destroy();
      dynamodbCommands.destroy();
    }
  });
  it("sends no trace headers from a Lambda environment (recursion detection is off), where the SDK's own client would", async () => {
    const env = { AWS_LAMBDA_FUNCTION_NAME: 'StepFunction', _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1' };
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    const { dynamodbCommands } = loopbackDynamoClients(endpoint, LOOPBACK_CREDENTIALS);
    const plain = new DynamoDBClient({ endpoint, region: LOOPBACK_REGION, credentials: LOOPBACK_CREDENTIALS });
    try {
      await plain.send(new PutItemCommand({ TableName: 't', Item: { pk: { S: 'p' } } }));
      expect(rec.seen.at(-1)!.headers['x-amzn-trace-id']).toBe(env._X_AMZN_TRACE_ID);
      await dynamodbCommands.send(new PutItemCommand({ TableName: 't', Item: { pk: { S: 'q' } } }));
      const r = rec.seen.at(-1)!;
      expect(r.headers['x-amzn-trace-id']).toBeUndefined();
      expect(/Signature=([0-9a-f]{64})/.exec(String(r.headers.authorization))![1]).toBe(expectedSignature(r, 'dynamodb'));
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      dynamodbCommands.destroy();
      plain.destroy();
    }
  });
});

describe('Function: loopbackSfnClient', () => {
  it('signs for the states service', async () => {
    const sfn = loopbackSfnClient(endpoint, LOOPBACK_CREDENTIALS);
    try {
      await sfn.send(new DescribeExecutionCommand({ executionArn: 'arn:aws:states:us-east-1:123456789012:execution:wf:run' }));
      const r = rec.seen.at(-1)!;
      expect(r.headers['x-amz-target']).toBe('AWSStepFunctions.DescribeExecution');
      expect(/Signature=([0-9a-f]{64})/.exec(String(r.headers.authorization))![1]).toBe(expectedSignature(r, 'states'));
    } finally {
      sfn.destroy();
    }
  });
});

describe('Function: withFastConfig (through the loopback clients)', () => {
  it("leaves every loopback client with a fast-mode config, so the middleware's spreads take the fast path", () => {
    // %HasFastProperties needs --allow-natives-syntax, so the check runs in a node of its own.
    const module = fileURLToPath(new URL('../src/loopbackClients.ts', import.meta.url));
    const script = `
      const { loopbackDynamoClients, loopbackSfnClientOf } = await import(${JSON.stringify(module)});
      const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
      const { dynamodb, dynamodbCommands } = loopbackDynamoClients('http://127.0.0.1:1', credentials);
      const sfn = loopbackSfnClientOf(await import('@aws-sdk/client-sfn'), 'http://127.0.0.1:1', credentials);
      const raw = new (await import('@aws-sdk/client-dynamodb')).DynamoDBClient({ region: 'us-east-1' });
      console.log(JSON.stringify([dynamodb, dynamodbCommands, sfn, raw].map((c) => %HasFastProperties(c.config))));`;
    const out = execFileSync(
      process.execPath,
      ['--allow-natives-syntax', '--no-warnings', '--import', 'tsx', '--input-type=module', '-e', script],
      { encoding: 'utf8' },
    );
    // The last one is a client as the SDK leaves it: dictionary mode, the case this exists for.
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual([true, true, true, false]);
  });
});
