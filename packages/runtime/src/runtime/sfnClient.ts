import { SFNClient } from '@aws-sdk/client-sfn';
import { awsClientConfig } from '../config/awsClientConfig.js';
import type { Runtime } from './Runtime.js';

/** The Runtime's Step Functions client (task-token answers, executions of the deployed workflows). */
export function sfnClient(rt: Runtime): SFNClient {
  return rt.client('sfn', (config) => new SFNClient(awsClientConfig(config.region, config.endpoints.stepfunctions)));
}
