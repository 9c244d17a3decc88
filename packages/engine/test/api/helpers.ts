import { DescribeExecutionCommand, SFNClient, type DescribeExecutionCommandOutput } from '@aws-sdk/client-sfn';

/** An SFN client for the embedded server (dummy credentials; no `sync-` host prefix on loopback). */
export function sfnClient(url: string): SFNClient {
  return new SFNClient({
    endpoint: url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    disableHostPrefix: true,
    maxAttempts: 1,
  });
}

/** Polls DescribeExecution until the execution leaves RUNNING (or `status` is reached). */
export async function waitForStatus(client: SFNClient, executionArn: string, timeoutMs = 10_000): Promise<DescribeExecutionCommandOutput> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const d = await client.send(new DescribeExecutionCommand({ executionArn }));
    if (d.status !== 'RUNNING') return d;
    if (Date.now() > until) throw new Error(`execution ${executionArn} still RUNNING after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

/** Resolves once `predicate` holds (polling), for waiting on handler side effects. */
export async function eventually(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The `name`/`message` of a rejected SDK call, for asserting AWS error codes. */
export async function sdkError(p: Promise<unknown>): Promise<{ name: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return { name: (e as Error).name, message: (e as Error).message };
  }
  throw new Error('expected the call to fail');
}
