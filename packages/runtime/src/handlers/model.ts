import type { Runtime } from '../runtime/Runtime.js';
import { runModelStep } from '../steps/modelStep.js';
import { lazyHandler } from './lazyHandler.js';
import { createStepHandler, type StepHandler } from './stepHandler.js';

/** The model step handler (single-shot model steps and agent-loop reason turns). */
export function createModelHandler(rt: Runtime): StepHandler {
  return createStepHandler(rt, 'model', (r, env) => runModelStep(r, env));
}

/** Lambda entry point. */
export const handler = lazyHandler(createModelHandler);
