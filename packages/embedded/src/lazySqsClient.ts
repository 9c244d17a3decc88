import type { SQSClient } from '@aws-sdk/client-sqs';
import { lazySdkClient } from './lazySdkClient.js';
import type { LoopbackCredentials } from './loopbackRequestGuard.js';

/**
 * The stack's SQS client, for the Runtime (RuntimeDeps.sqs): built, with the SQS SDK loaded, on
 * the first message, since only approvals and the `sqs` connector send one and most runs do
 * neither (the runtime loads its SQS commands the same way, when a step first sends). The Runtime
 * uses nothing of it but `send` and `destroy`.
 */
export function lazySqsClient(endpoint: string, region: string, credentials: LoopbackCredentials): SQSClient {
  return lazySdkClient(() =>
    import('@aws-sdk/client-sqs').then(({ SQSClient }) => new SQSClient({ endpoint, region, credentials: { ...credentials } })),
  );
}
