import type { Logger } from '@aws-lambda-powertools/logger';
import type { Runtime } from '../runtime/Runtime.js';
import { defaultRuntime } from './defaultRuntime.js';
import type { StepHandler } from './stepHandler.js';

/**
 * A Lambda entry point that builds its handler (and the Runtime) on first use. Every invocation
 * waits for the Lambda telemetry (traced SDK clients), gives the logger the Lambda context (request
 * id, function, cold start on every line) and publishes the invocation's metrics when it ends.
 */
export function lazyHandler(make: (rt: Runtime) => StepHandler): StepHandler {
  let h: StepHandler | undefined;
  return async (event, context) => {
    const rt = defaultRuntime();
    await rt.telemetryReady();
    if (isLambdaContext(context)) rt.logger.addContext(context);
    h ??= make(rt);
    try {
      return await h(event, context);
    } finally {
      rt.telemetry.flush();
    }
  };
}

/** The Lambda context as the logger takes it. */
type Context = Parameters<Logger['addContext']>[0];

/** True for the context object Lambda passes (the embedded engine passes none). */
function isLambdaContext(context: unknown): context is Context {
  const c = context as { awsRequestId?: unknown; functionName?: unknown } | undefined;
  return typeof c?.awsRequestId === 'string' && typeof c.functionName === 'string';
}
