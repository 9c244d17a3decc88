// The embedded stack's SDK clients still sign every request with SigV4: the signature the server
// receives is recomputed here from the request itself, by an implementation independent of the SDK's.
import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DescribeExecutionCommand } from '@aws-sdk/client-sfn';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LOOPBACK_CREDENTIALS, LOOPBACK_REGION, loopbackDynamoClients, loopbackSfnClient, withSharedSigner } from '../src/stack/loopbackClients.js';
import { startRecordingServer, type RecordingServer, type SeenRequest } from './support/recordingServer.js';

let rec: RecordingServer;
let endpoint: string;
beforeAll(async () => {
  rec = await startRecordingServer((req, res) => {
    res.setHeader('content-type', 'application/x-amz-json-1.0');
    res.end(String(req.headers['x-amz-target']).startsWith('AWSStepFunctions') ? JSON.stringify({ executionArn: 'arn:x', stateMachineArn: 'arn:y', status: 'RUNNING', startDate: 1 }) : '{}');
  });
  endpoint = rec.url;
});
afterAll(() => rec.close());

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const hmac = (key: Buffer | string, s: string) => createHmac('sha256', key).update(s, 'utf8').digest();

/** The SigV4 signature of a received request, per the AWS documentation (no query, POST to /). */
function expectedSignature(r: SeenRequest, service: string): string {
  const auth = String(r.headers.authorization);
  const signedHeaders = /SignedHeaders=([^,]+)/.exec(auth)![1]!.split(';');
  const amzDate = String(r.headers['x-amz-date']);
  const date = amzDate.slice(0, 8);
  const canonical = [
    r.method, '/', '',
    ...signedHeaders.map((h) => `${h}:${String(r.headers[h]).trim()}`), '',
    signedHeaders.join(';'), sha256(r.body),
  ].join('\n');
  const scope = `${date}/${LOOPBACK_REGION}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  let key = hmac(`AWS4${LOOPBACK_CREDENTIALS.secretAccessKey}`, date);
  for (const part of [LOOPBACK_REGION, service, 'aws4_request']) key = hmac(key, part);
  return hmac(key, toSign).toString('hex');
}

describe('Function: loopbackDynamoClients', () => {
  it('signs every request with SigV4 over its headers and body, and sends no user agent', async () => {
    const { dynamodb, dynamodbCommands } = loopbackDynamoClients(endpoint);
    try {
      for (const client of [dynamodb, dynamodbCommands]) {
        for (let i = 0; i < 2; i++) {
          await client.send(new PutItemCommand({ TableName: 't', Item: { pk: { S: `a${i}` } }, ConditionExpression: 'attribute_not_exists(pk)' }));
          const r = rec.seen.at(-1)!;
          expect(r.headers['x-amz-target']).toBe('DynamoDB_20120810.PutItem');
          expect(String(r.headers.authorization)).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=local/\\d{8}/us-east-1/dynamodb/aws4_request, SignedHeaders=[^,]*host[^,]*x-amz-date[^,]*, Signature=[0-9a-f]{64}$`));
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
});

describe('Function: withSharedSigner', () => {
  it("builds the SDK's signer once per signing scope, and again after a failed build", async () => {
    const client = new DynamoDBClient({ endpoint, region: LOOPBACK_REGION, credentials: LOOPBACK_CREDENTIALS });
    const config = client.config as unknown as { signer: (a?: { signingRegion?: string; signingName?: string }) => Promise<unknown> };
    const sdkSigner = config.signer;
    let builds = 0;
    let fail = true;
    config.signer = (a) => {
      builds++;
      if (fail) {
        fail = false;
        return Promise.reject(new Error('no credentials yet'));
      }
      return sdkSigner(a);
    };
    withSharedSigner(client);
    try {
      await expect(client.send(new PutItemCommand({ TableName: 't', Item: { pk: { S: 'x' } } }))).rejects.toThrow('no credentials yet');
      for (let i = 0; i < 3; i++) {
        await client.send(new PutItemCommand({ TableName: 't', Item: { pk: { S: `s${i}` } } }));
        expect(/Signature=([0-9a-f]{64})/.exec(String(rec.seen.at(-1)!.headers.authorization))![1]).toBe(expectedSignature(rec.seen.at(-1)!, 'dynamodb'));
      }
      const a = await config.signer({ signingRegion: 'us-east-1', signingName: 'dynamodb' });
      expect(await config.signer({ signingRegion: 'us-east-1', signingName: 'dynamodb' })).toBe(a);
      expect(await config.signer({ signingRegion: 'eu-west-1', signingName: 'dynamodb' })).not.toBe(a);
      expect(builds).toBe(4); // the failure, the requests' scope once, the explicit us-east-1 scope, eu-west-1
    } finally {
      client.destroy();
    }
  });
});

describe('Function: loopbackSfnClient', () => {
  it('signs for the states service', async () => {
    const sfn = loopbackSfnClient(endpoint);
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
