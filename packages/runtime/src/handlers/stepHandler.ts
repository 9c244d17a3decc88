import middy from '@middy/core';
import type { StepEnvelope } from '@stepforge/contract';
import type { StepContext } from '../middleware/defineMiddleware.js';
import { logStep, redactSecrets, validateEnvelope } from '../middleware/middlewares.js';
import type { Runtime } from '../runtime/Runtime.js';

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
