import { SQSClient } from '@aws-sdk/client-sqs';
import { awsClientConfig } from '../config/awsClientConfig.js';
import type { Runtime } from './Runtime.js';

/** The Runtime's SQS client (the approval queue, the `sqs` connector). */
export function sqsClient(rt: Runtime): SQSClient {
  return rt.client('sqs', (config) => new SQSClient(awsClientConfig(config.region, config.endpoints.sqs)));
}
