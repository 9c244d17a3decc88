import type middy from '@middy/core';
import * as z from 'zod';
import { RuntimeError } from '../errors/RuntimeError.js';

/** A middy middleware as this runtime builds them. */
export type Middleware = middy.MiddlewareObj<unknown, unknown, Error, StepContext>;

/** The Lambda context plus what the runtime's middlewares attach to it. */
export interface StepContext {
  getRemainingTimeInMillis?: () => number;
  awsRequestId?: string;
  functionName?: string;
  /** Set by `validateEnvelope` when the state invoked us with `.waitForTaskToken`. */
  stepforgeTaskToken?: string;
  [key: string]: unknown;
}

/**
 * Defines a middleware factory with a strict option schema: every middleware has the same shape
 * (`factory(options) → {before?, after?, onError?}`) and a misspelt option fails at once.
 */
export function defineMiddleware<S extends z.ZodObject>(
  name: string,
  schema: S,
  build: (options: z.infer<S>) => Middleware,
): (options: z.input<S>) => Middleware {
  const strict = schema.strict();
  return (options) => {
    const parsed = strict.safeParse(options);
    if (!parsed.success) {
      throw new RuntimeError(
        'ConfigError',
        `middleware ${name}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(options)'}: ${i.message}`).join('; ')}`,
      );
    }
    return build(parsed.data as z.infer<S>);
  };
}
