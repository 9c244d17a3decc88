import { RunService } from '@stepforge/runtime';
import type { EmbeddedStack } from './EmbeddedStack.js';
import { engineExecutions } from './engineExecutions.js';
import { engineStateMachines } from './engineStateMachines.js';
import { RegisteredCatalog } from './RegisteredCatalog.js';

export type { RunDetails, StartedRun, StartOptions } from '@stepforge/runtime';

/**
 * The run service on the embedded stack: the runtime's RunService over the engine (its
 * Executions, with the owner's shortcuts) and the workflows registered from the project's files.
 * The owner settles each run it starts when the execution ends; a wait stops when the stack closes.
 */
export class EmbeddedRunService extends RunService {
  declare readonly catalog: RegisteredCatalog;

  constructor(
    readonly stack: EmbeddedStack,
    projectDir: string,
    env: Readonly<Record<string, string | undefined>> = process.env,
  ) {
    // The caller's STEPFORGE_POLICY, else the one the stack was opened with in this process.
    const policyEnv = env.STEPFORGE_POLICY || stack.policyFromEnv === undefined ? env : { ...env, STEPFORGE_POLICY: stack.policyFromEnv };
    super({
      runtime: stack.runtime,
      executions: engineExecutions(stack),
      catalog: new RegisteredCatalog(engineStateMachines(stack), stack.runtime.workflows, projectDir, policyEnv),
      watchStarted: stack.owner,
      closed: () => stack.closed,
    });
  }
}
