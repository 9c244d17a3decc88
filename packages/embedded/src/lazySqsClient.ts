import type { SQSClient } from '@aws-sdk/client-sqs';
import type { LoopbackCredentials } from './loopbackRequestGuard.js';

/**
 * The stack's SQS client, for the Runtime (RuntimeDeps.sqs): its `send` loads the SQS SDK and
 * builds the client on the first message, since only approvals and the `sqs` connector send one
 * and most runs do neither (the runtime loads its SQS commands the same way, when a step first
 * sends). `destroy()` ends the client if it was built. The Runtime uses nothing else of it.
 */
export function lazySqsClient(endpoint: string, region: string, credentials: LoopbackCredentials): SQSClient {
  let client: Promise<SQSClient> | undefined;
  let destroyed = false;
  const built = () =>
    (client ??= import('@aws-sdk/client-sqs').then(({ SQSClient }) => {
      const c = new SQSClient({ endpoint, region, credentials: { ...credentials } });
      if (destroyed) c.destroy();
      return c;
    }));
  const lazy = {
    send: (command: unknown, options?: unknown) =>
      built().then((c) => (c.send as (command: unknown, options?: unknown) => Promise<unknown>)(command, options)),
    destroy() {
      destroyed = true;
      void client?.then((c) => c.destroy());
    },
  };
  return lazy as unknown as SQSClient;
}
