import type { SFNClient } from '@aws-sdk/client-sfn';
import type { Runtime } from '../runtime/Runtime.js';
import { stepFunctions } from '../runtime/sfnClient.js';
import { deployedCatalog } from './deployedCatalog.js';
import { RunService } from './RunService.js';
import { sfnExecutions } from './sfnExecutions.js';

/** How often a wait on AWS asks Step Functions whether the execution has ended. */
const AWS_POLL_MS = 1000;

/**
 * The run service of a deployed stack (the api and trigger Lambdas): Step Functions through the
 * runtime's client, the deployed workflows. Runs settle when they are read or waited for.
 */
export function deployedRunService(rt: Runtime): RunService {
  const sfn = {
    send: async (command: never, options?: never) => (await stepFunctions(rt)).client.send(command, options),
  } as unknown as Pick<SFNClient, 'send'>;
  return new RunService({ runtime: rt, executions: sfnExecutions(sfn), catalog: deployedCatalog(rt), pollMs: AWS_POLL_MS });
}
