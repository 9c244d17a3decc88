import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Aws4HttpSigner } from '../src/Aws4HttpSigner.js';
import { LoopbackHttpHandler, type SdkHttpRequest } from '../src/LoopbackHttpHandler.js';
import { expectedSigV4, sentSignature } from './support/expectedSigV4.js';
import { startRecordingServer, type RecordingServer } from './support/recordingServer.js';

let rec: RecordingServer;
beforeAll(async () => {
  rec = await startRecordingServer((_req, res) => {
    res.end('{}');
  });
});
afterAll(() => rec.close());

const creds = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const request = (over: Partial<SdkHttpRequest> = {}): SdkHttpRequest => ({
  protocol: 'http:',
  hostname: '127.0.0.1',
  port: rec.port,
  method: 'POST',
  path: '/',
  headers: {
    host: `127.0.0.1:${rec.port}`,
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': 'DynamoDB_20120810.PutItem',
    'user-agent': 'not signed',
  },
  body: '{"TableName":"t"}',
  ...over,
});

/** Signs, sends through the loopback handler, and returns what the server received. */
async function signAndSend(req: SdkHttpRequest, identity: object, props: Record<string, unknown>) {
  const signed = await new Aws4HttpSigner().sign(req, identity, props);
  const h = new LoopbackHttpHandler();
  try {
    await h.handle(signed);
  } finally {
    h.destroy();
  }
  return { signed, seen: rec.seen.at(-1)! };
}

describe('Class: Aws4HttpSigner', () => {
  describe('Method: sign', () => {
    it("signs method, path, headers and body with SigV4 for the scheme option's name and region, without touching the request", async () => {
      const req = request();
      const { signed, seen } = await signAndSend(req, creds, { name: 'dynamodb', region: 'eu-west-1' });
      expect(req.headers).not.toHaveProperty('authorization');
      expect(signed.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
      expect(signed.headers['content-length']).toBe('17'); // signed, so sent as signed
      expect(String(seen.headers.authorization)).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/dynamodb\/aws4_request, SignedHeaders=content-length;content-type;host;x-amz-date;x-amz-target, Signature=[0-9a-f]{64}$/,
      );
      expect(sentSignature(seen.headers)).toBe(
        expectedSigV4(seen, { region: 'eu-west-1', service: 'dynamodb', secretAccessKey: creds.secretAccessKey }),
      );
    });

    it("prefers the endpoint's signing name and region, signs the query and a session token, and signs bytes as their text", async () => {
      const body = new TextEncoder().encode('{"a":"é"}');
      const { seen } = await signAndSend(
        request({ path: '/p', query: { b: '2 3', a: ['x', 'y'] }, body }),
        { ...creds, sessionToken: 'tok/en=' },
        {
          name: 'dynamodb',
          region: 'us-east-1',
          signingName: 'states',
          signingRegion: 'ap-south-1',
        },
      );
      expect(seen.url).toBe('/p?a=x&a=y&b=2%203');
      expect(seen.headers['x-amz-security-token']).toBe('tok/en=');
      expect(String(seen.headers.authorization)).toContain(
        '/ap-south-1/states/aws4_request, SignedHeaders=content-length;content-type;host;x-amz-date;x-amz-security-token;x-amz-target,',
      );
      expect(sentSignature(seen.headers)).toBe(
        expectedSigV4(seen, { region: 'ap-south-1', service: 'states', secretAccessKey: creds.secretAccessKey }),
      );
    });

    it('refuses what it cannot sign: no credentials, no scope, a streamed body', async () => {
      const signer = new Aws4HttpSigner();
      await expect(signer.sign(request(), {}, { name: 'dynamodb', region: 'us-east-1' })).rejects.toThrow(
        'Aws4HttpSigner needs AWS credentials (accessKeyId and secretAccessKey)',
      );
      await expect(signer.sign(request(), creds, { region: 'us-east-1' })).rejects.toThrow(
        'Aws4HttpSigner needs a signing name and region',
      );
      const { Readable } = await import('node:stream');
      await expect(signer.sign(request({ body: Readable.from(['x']) }), creds, { name: 'dynamodb', region: 'us-east-1' })).rejects.toThrow(
        'Aws4HttpSigner signs text or byte payloads only, not a stream',
      );
    });
  });
});
