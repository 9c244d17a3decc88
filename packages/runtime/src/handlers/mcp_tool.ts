import type { Runtime } from '../runtime/Runtime.js';
import { runMcpToolStep } from '../steps/mcpToolStep.js';
import { lazyHandler } from './lazyHandler.js';
import { createStepHandler, type StepHandler } from './stepHandler.js';

/** The mcp_tool handler. */
export function createMcpToolHandler(rt: Runtime): StepHandler {
  return createStepHandler(rt, 'mcp_tool', (r, env) => runMcpToolStep(r, env));
}

/** Lambda entry point. */
export const handler = lazyHandler(createMcpToolHandler);
