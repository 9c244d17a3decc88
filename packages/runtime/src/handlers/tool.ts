import type { Runtime } from '../runtime/Runtime.js';
import { runToolStep } from '../steps/toolStep.js';
import { lazyHandler } from './lazyHandler.js';
import { createStepHandler, type StepHandler } from './stepHandler.js';

/** The tool handler (tool steps and agent tool calls; approval-gated calls with a task token). */
export function createToolHandler(rt: Runtime): StepHandler {
  return createStepHandler(rt, 'tool', (r, env, token) => runToolStep(r, env, token));
}

/** Lambda entry point. */
export const handler = lazyHandler(createToolHandler);
