import type { SFNClient } from '@aws-sdk/client-sfn';
import { awsClientConfig } from '../config/awsClientConfig.js';
import type { Runtime } from './Runtime.js';

/** The Step Functions SDK module. */
export type SfnSdk = typeof import('@aws-sdk/client-sfn');

let sdk: Promise<SfnSdk> | undefined;

/**
 * The Step Functions SDK, loaded on the first request: most runs send none (the embedded owner
 * registers and runs its workflows in process; only approvals, child workflows and the deployed
 * run service send one), and loading it is about 10 ms of every `run`'s start-up otherwise.
 */
export function sfnSdk(): Promise<SfnSdk> {
  return (sdk ??= import('@aws-sdk/client-sfn'));
}

/** The Step Functions SDK and the Runtime's client (task-token answers, executions of the deployed workflows). */
export async function stepFunctions(rt: Runtime): Promise<{ sdk: SfnSdk; client: SFNClient }> {
  const loaded = await sfnSdk();
  return {
    sdk: loaded,
    client: rt.client('sfn', (config) => new loaded.SFNClient(awsClientConfig(config.region, config.endpoints.stepfunctions))),
  };
}
