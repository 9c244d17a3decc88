import middy from '@middy/core';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { StepEnvelope } from '@stepforge/contract';
import type { StepContext } from '../middleware/defineMiddleware.js';
import { logStep, redactSecrets, validateEnvelope } from '../middleware/middlewares.js';
import type { Runtime } from '../runtime/Runtime.js';
import { defaultRuntime } from './defaultRuntime.js';

/** A step handler as the engine and Lambda call it. */
export type StepHandler = (event: unknown, context?: unknown) => Promise<unknown>;

/**
 * Wraps a plain step module as a middy handler: envelope validation (zod schema from the
 * compiler), structured logging with run/step ids, and secret redaction of results and errors.
 */
export function createStepHandler(
  rt: Runtime,
  name: string,
  body: (rt: Runtime, env: StepEnvelope, taskToken: string | undefined) => Promise<unknown>,
): StepHandler {
  const h = middy<unknown, unknown, Error, StepContext>(async (event: unknown, context: StepContext) =>
    body(rt, event as StepEnvelope, context.stepforgeTaskToken),
  )
    .use(logStep({ runtime: rt, handler: name }))
    .use(validateEnvelope({ runtime: rt }))
    .use(redactSecrets({ runtime: rt }));
  // Lambda passes a context; the embedded engine may pass none — give middy a fresh object each time.
  return (event, context) => h(event, { ...((context as object | undefined) ?? {}) } as StepContext);
}

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
