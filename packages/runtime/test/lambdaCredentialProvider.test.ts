// The credential chain the Lambda bundles use in place of the SDK's default one: the environment,
// else the container credentials endpoint (here an HTTP server on loopback), else ConfigError.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultProvider } from '../src/bundled/lambdaCredentialProvider.js';

const VARS = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_CONTAINER_AUTHORIZATION_TOKEN',
];
const saved = Object.fromEntries(VARS.map((v) => [v, process.env[v]]));
let server: Server;
let url: string;
const seen: (string | undefined)[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers.authorization);
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        AccessKeyId: 'AKIDCONTAINER',
        SecretAccessKey: 'container-secret',
        Token: 'container-token',
        Expiration: '2099-01-01T00:00:00Z',
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/creds`;
});

afterEach(() => {
  for (const v of VARS) {
    if (saved[v] === undefined) delete process.env[v];
    else process.env[v] = saved[v];
  }
});

afterAll(() => new Promise((r) => server.close(r)));

function only(vars: Record<string, string>): void {
  for (const v of VARS) delete process.env[v];
  Object.assign(process.env, vars);
}

describe('Function: defaultProvider (bundled)', () => {
  it('reads the function role credentials Lambda puts in the environment', async () => {
    only({ AWS_ACCESS_KEY_ID: 'AKIDENV', AWS_SECRET_ACCESS_KEY: 'env-secret', AWS_SESSION_TOKEN: 'env-token' });
    expect(await defaultProvider()()).toMatchObject({ accessKeyId: 'AKIDENV', secretAccessKey: 'env-secret', sessionToken: 'env-token' });
  });

  it('reads the container credentials endpoint when the environment has no keys', async () => {
    only({ AWS_CONTAINER_CREDENTIALS_FULL_URI: url, AWS_CONTAINER_AUTHORIZATION_TOKEN: 'let-me-in' });
    const creds = await defaultProvider()();
    expect(creds).toMatchObject({ accessKeyId: 'AKIDCONTAINER', secretAccessKey: 'container-secret', sessionToken: 'container-token' });
    expect(creds.expiration?.toISOString()).toBe('2099-01-01T00:00:00.000Z');
    expect(seen.at(-1)).toBe('let-me-in');
  });

  it('fails with ConfigError, saying what to set, when neither is there', async () => {
    only({});
    const err = await defaultProvider()().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'ConfigError' });
    expect((err as Error).message).toMatch(
      /^no AWS credentials: a Stepforge handler bundle reads them from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY .* set one of them/,
    );
  });
});
