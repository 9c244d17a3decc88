import type { Runtime } from '../runtime/Runtime.js';
import { runFunctionStep } from '../steps/functionStep.js';
import { lazyHandler } from './lazyHandler.js';
import { createStepHandler, type StepHandler } from './stepHandler.js';

/** The user-function handler. */
export function createFunctionHandler(rt: Runtime): StepHandler {
  return createStepHandler(rt, 'function', (r, env) => runFunctionStep(r, env));
}

/** Lambda entry point. */
export const handler = lazyHandler(createFunctionHandler);
