// The Lambda entry points as Lambda calls them: each builds its Runtime from the environment on first
// use and gives the logger the invocation's context, so every line it writes names the request.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startDynalite, type DynamoEndpoint } from './emulators.js';

let ddb: DynamoEndpoint;
beforeAll(async () => {
  ddb = await startDynalite();
});
afterAll(async () => {
  await ddb.stop();
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  vi.resetModules();
});

const lambdaContext = (name: string) => ({
  awsRequestId: `req-${name}`,
  functionName: `Stepforge-Handlers${name}`,
  memoryLimitInMB: '1024',
  invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:Stepforge-Handlers${name}`,
  functionVersion: '$LATEST',
  callbackWaitsForEmptyEventLoop: true,
  logGroupName: 'g',
  logStreamName: 's',
  getRemainingTimeInMillis: () => 1000,
});

/** Log lines written while `f` runs, parsed. */
async function logLines(f: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const writes: string[] = [];
  const keep = (chunk: string | Uint8Array) => {
    writes.push(String(chunk));
    return true;
  };
  // Powertools writes info lines to stdout and errors to stderr.
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(keep);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(keep);
  try {
    await f();
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  return writes
    .join('')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('Lambda entry points', () => {
  it("the API's: a request that fails inside is logged with the Lambda request id, and answered 500", async () => {
    // A table that does not exist: every read fails inside the handler.
    vi.stubEnv('STEPFORGE_DYNAMODB_ENDPOINT', ddb.endpoint);
    vi.stubEnv('STEPFORGE_TABLE', 'no-such-table');
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'Stepforge-HandlersApi');
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
    const { handler } = await import('../src/handlers/api.js');
    let answer: { statusCode: number } | undefined;
    const lines = await logLines(async () => {
      answer = (await handler({ httpMethod: 'GET', path: '/runs/r-1' }, lambdaContext('Api'))) as { statusCode: number };
    });
    expect(answer?.statusCode).toBe(500);
    expect(lines.find((l) => l.message === 'api request failed')).toMatchObject({
      function_request_id: 'req-Api',
      function_name: 'Stepforge-HandlersApi',
      errorName: 'ResourceNotFoundException',
    });
  });
});
