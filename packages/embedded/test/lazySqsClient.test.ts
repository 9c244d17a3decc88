// The stack's SQS client loads the SQS SDK and builds itself on the first message; what it sends
// is signed with the stack's credentials and reaches the emulator's queue.
import { describe, expect, it } from 'vitest';
import { ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startEmulators } from '../src/startEmulators.js';
import { lazySqsClient } from '../src/lazySqsClient.js';

const creds = { accessKeyId: 'stack-key', secretAccessKey: 'stack-secret' };

describe('Function: lazySqsClient', () => {
  it("sends to the stack's queue, signed with its credentials; destroy() ends it", async () => {
    const emulators = await startEmulators({ credentials: creds, queues: ['approvals'] });
    const lazy = lazySqsClient(emulators.sqsEndpoint, 'us-east-1', creds);
    const reader = new SQSClient({ endpoint: emulators.sqsEndpoint, region: 'us-east-1', credentials: creds });
    try {
      const QueueUrl = emulators.sqsQueueUrl('approvals');
      const sent = (await lazy.send(new SendMessageCommand({ QueueUrl, MessageBody: 'asks' }))) as { MessageId?: string };
      expect(sent.MessageId).toMatch(/./);
      const got = await reader.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 0 }));
      expect(got.Messages?.map((m) => m.Body)).toEqual(['asks']);
      // Signed with other credentials, the emulator refuses it (the guard), as it would any stranger's.
      const stranger = lazySqsClient(emulators.sqsEndpoint, 'us-east-1', { accessKeyId: 'x', secretAccessKey: 'y' });
      const refused = (await stranger.send(new SendMessageCommand({ QueueUrl, MessageBody: 'no' })).catch((e: unknown) => e)) as {
        $metadata?: { httpStatusCode?: number };
      };
      expect(refused.$metadata?.httpStatusCode).toBe(403);
      stranger.destroy();
    } finally {
      lazy.destroy();
      reader.destroy();
      await emulators.close();
    }
  });
});
