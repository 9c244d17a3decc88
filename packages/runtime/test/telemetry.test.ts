import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createModelHandler } from '../src/handlers/model.js';
import { createLogger } from '../src/logging/createLogger.js';
import { lambdaTelemetry } from '../src/logging/lambdaTelemetry.js';
import { NO_TELEMETRY, type MetricName, type Telemetry } from '../src/logging/Telemetry.js';
import type { Runtime } from '../src/runtime/Runtime.js';
import { Redactor } from '../src/secrets/Redactor.js';
import { envelope } from './envelope.js';
import { makeRuntime, startDynalite, type DynamoEndpoint } from './emulators.js';

/** Telemetry that records what it is given. */
function recording(): Telemetry & { metrics: [MetricName, number][]; flushes: number } {
  const t = {
    enabled: true,
    metrics: [] as [MetricName, number][],
    flushes: 0,
    captureClient: <T>(c: T) => c,
    addMetric: (n: MetricName, v: number) => void t.metrics.push([n, v]),
    flush: () => void t.flushes++,
  };
  return t;
}

let ddb: DynamoEndpoint;
beforeAll(async () => {
  ddb = await startDynalite();
});
afterAll(async () => {
  await ddb.stop();
});
afterEach(() => vi.restoreAllMocks());

describe('Function: lambdaTelemetry', () => {
  it('traces an SDK client through the X-Ray middleware (on the Lambda runtime)', () => {
    vi.stubEnv('AWS_EXECUTION_ENV', 'AWS_Lambda_nodejs22.x');
    const t = lambdaTelemetry('stepforge-model');
    vi.unstubAllEnvs();
    const client = new DynamoDBClient({ region: 'us-east-1' });
    const before = client.middlewareStack.identify().length;
    expect(t.captureClient(client)).toBe(client);
    expect(client.middlewareStack.identify().length).toBeGreaterThan(before);
    expect(client.middlewareStack.identify().join()).toMatch(/XRay/i);
    client.destroy();
  });

  it('publishes the invocation metrics as one EMF document in the Stepforge namespace, and nothing when none were added', () => {
    const writes: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    const t = lambdaTelemetry('stepforge-model');
    t.flush();
    expect(writes).toEqual([]);
    t.addMetric('StepsSucceeded', 1);
    t.addMetric('ModelInputTokens', 120);
    t.flush();
    const docs = writes
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>);
    expect(docs).toHaveLength(1);
    const emf = docs[0]!['_aws'].CloudWatchMetrics[0];
    expect(emf.Namespace).toBe('Stepforge');
    expect(emf.Dimensions).toEqual([['service']]);
    expect(emf.Metrics).toEqual([
      { Name: 'StepsSucceeded', Unit: 'Count' },
      { Name: 'ModelInputTokens', Unit: 'Count' },
    ]);
    expect(docs[0]).toMatchObject({ service: 'stepforge-model', StepsSucceeded: 1, ModelInputTokens: 120 });
  });
});

describe('Function: createStepHandler metrics', () => {
  let rt: Runtime;
  let t: ReturnType<typeof recording>;
  beforeAll(async () => {
    t = recording();
    rt = await makeRuntime(ddb.endpoint, {}, { telemetry: t });
  });
  afterAll(async () => {
    await rt.close();
  });

  it('counts a succeeded step with its tokens, and a failed one as an error', async () => {
    const h = createModelHandler(rt);
    const r = (await h(
      envelope({ kind: 'model', step: 'plan', config: { prompt: 'Plan' }, inputs: { value: 'Plan research on whales' } }),
    )) as { usage: { inputTokens: number; outputTokens: number } };
    expect(t.metrics).toEqual([
      ['StepsSucceeded', 1],
      ['ModelInputTokens', r.usage.inputTokens],
      ['ModelOutputTokens', r.usage.outputTokens],
    ]);
    t.metrics.length = 0;
    await expect(h({ version: 2, nonsense: true })).rejects.toMatchObject({ name: 'InvalidEnvelope' });
    expect(t.metrics).toEqual([['StepErrors', 1]]);
  });

  it('leaves telemetry off outside Lambda', async () => {
    const plain = await makeRuntime(ddb.endpoint, { mode: 'aws' });
    await plain.telemetryReady();
    expect(plain.telemetry).toBe(NO_TELEMETRY);
    await plain.close();
  });
});

describe('Function: createLogger', () => {
  it('writes the Lambda context on every line once the handler adds it', () => {
    const writes: string[] = [];
    const logger = createLogger(new Redactor(), { logLevel: 'INFO' });
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    logger.addContext({
      awsRequestId: 'req-1',
      functionName: 'Stepforge-HandlersModel',
      memoryLimitInMB: '1024',
      invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:Stepforge-HandlersModel',
      functionVersion: '$LATEST',
      callbackWaitsForEmptyEventLoop: true,
      logGroupName: 'g',
      logStreamName: 's',
      getRemainingTimeInMillis: () => 1000,
      done: () => undefined,
      fail: () => undefined,
      succeed: () => undefined,
    } as never);
    logger.info('hello');
    const line = JSON.parse(writes.join('').trim()) as Record<string, unknown>;
    expect(line).toMatchObject({
      message: 'hello',
      function_request_id: 'req-1',
      function_name: 'Stepforge-HandlersModel',
      function_arn: 'arn:aws:lambda:us-east-1:123456789012:function:Stepforge-HandlersModel',
      function_memory_size: '1024',
    });
    expect(typeof line['cold_start']).toBe('boolean');
  });
});
