import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { awsClientConfig } from '../config/awsClientConfig.js';
import type { Runtime } from './Runtime.js';

/** The Runtime's EventBridge client (the `eventbridge` connector). */
export function eventBridgeClient(rt: Runtime): EventBridgeClient {
  return rt.client('eventbridge', (config) => new EventBridgeClient(awsClientConfig(config.region, config.endpoints.eventbridge)));
}
