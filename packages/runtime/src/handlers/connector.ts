import type { Runtime } from '../runtime/Runtime.js';
import { runConnectorStep } from '../steps/connectorStep.js';
import { lazyHandler } from './lazyHandler.js';
import { createStepHandler, type StepHandler } from './stepHandler.js';

/** The connector handler (http, slack, sqs, eventbridge). */
export function createConnectorHandler(rt: Runtime): StepHandler {
  return createStepHandler(rt, 'connector', (r, env) => runConnectorStep(r, env));
}

/** Lambda entry point. */
export const handler = lazyHandler(createConnectorHandler);
