import type { ExecuteFn, ValidateFn } from '../executions/ExecutionManager.js';
import type { TaskInvoker } from '../interpreter/types.js';

/** Lambda handlers by function name or ARN: `async (event, context) => result`; a throw fails the task with the error's `name`. */
export type LambdaHandlers = Readonly<Record<string, (event: unknown, context: unknown) => unknown>>;

/** The interpreter pieces the manager runs on. */
export interface EngineFunctions {
  readonly execute: ExecuteFn;
  readonly validate?: ValidateFn;
  readonly lambda?: TaskInvoker;
}

/**
 * The interpreter, its validator and a Lambda invoker over `handlers`, looked up from the package
 * index at run time (the interpreter and the server are built side by side; this keeps the server
 * free of a static import cycle through index.ts).
 */
export async function defaultEngine(handlers?: LambdaHandlers): Promise<EngineFunctions> {
  const mod = (await import('../index.js')) as Record<string, unknown>;
  const execute = mod.executeStateMachine as ExecuteFn | undefined;
  const validate = mod.validateDefinition as ValidateFn | undefined;
  const createLambdaInvoker = mod.createLambdaInvoker as ((h: LambdaHandlers, substitutions?: Record<string, string>) => TaskInvoker) | undefined;
  if (typeof execute !== 'function') {
    return {
      execute: () => Promise.reject(new Error('The ASL interpreter (executeStateMachine) is not available in this build.')),
    };
  }
  return {
    execute,
    ...(typeof validate === 'function' ? { validate } : {}),
    ...(typeof createLambdaInvoker === 'function' ? { lambda: createLambdaInvoker(handlers ?? {}) } : {}),
  };
}
