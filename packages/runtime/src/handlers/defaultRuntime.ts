import { runtimeConfigFromEnv } from '../config/RuntimeConfig.js';
import { Runtime } from '../runtime/Runtime.js';

let shared: Runtime | undefined;

/**
 * The process-wide Runtime built from the environment (one per Lambda container). Apart from
 * stepHandler.ts so that the handlers that are no step (api, workflowRecord) carry no middy chain.
 */
export function defaultRuntime(): Runtime {
  return (shared ??= new Runtime(runtimeConfigFromEnv()));
}
