import type { ExecuteFn, ValidateFn } from '../executions/ExecutionManager.js';
import { executeStateMachine } from '../interpreter/executeStateMachine.js';
import type { TaskInvoker } from '../interpreter/types.js';
import { validateDefinition } from '../interpreter/validateDefinition.js';
import { createLambdaInvoker } from '../lambda/createLambdaInvoker.js';

/** Lambda handlers by function name or ARN: `async (event, context) => result`; a throw fails the task with the error's `name`. */
export type LambdaHandlers = Readonly<Record<string, (event: unknown, context: unknown) => unknown>>;

/** The interpreter pieces the manager runs on. */
export interface EngineFunctions {
  readonly execute: ExecuteFn;
  readonly validate?: ValidateFn;
  readonly lambda?: TaskInvoker;
}

/** The interpreter, its validator and a Lambda invoker over `handlers`. */
export async function defaultEngine(handlers?: LambdaHandlers): Promise<EngineFunctions> {
  return {
    execute: executeStateMachine as ExecuteFn,
    validate: validateDefinition as ValidateFn,
    lambda: createLambdaInvoker(handlers ?? {}),
  };
}
