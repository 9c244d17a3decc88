import { STEP_HANDLER_TABLE, type StepHandlerId } from '@stepforge/contract';
import type { RuntimeConfig } from './config/RuntimeConfig.js';
import { createConnectorHandler } from './handlers/connector.js';
import { createFunctionHandler } from './handlers/function.js';
import { createMcpToolHandler } from './handlers/mcp_tool.js';
import { createModelHandler } from './handlers/model.js';
import { createToolHandler } from './handlers/tool.js';
import { Runtime, type RuntimeDeps } from './runtime/Runtime.js';

/** A step handler as the engine calls it. */
export type LocalHandler = (event: unknown, context?: unknown) => Promise<unknown>;

/** The step handlers by the function names the ASL placeholders name (`${ModelStepFunctionArn}` → `ModelStepFunction`). */
export type LocalHandlers = Readonly<Record<string, LocalHandler>>;

/** How each step handler of the handler table is built over a Runtime. */
const CREATE: Readonly<Record<StepHandlerId, (rt: Runtime) => LocalHandler>> = {
  model: createModelHandler,
  tool: createToolHandler,
  connector: createConnectorHandler,
  function: createFunctionHandler,
  mcpTool: createMcpToolHandler,
};

/**
 * The embedded stack's handler map: the same middy handlers Lambda runs, over one Runtime
 * built from `config` (pointed at the loopback emulators). The engine registers these by name.
 * Pass a Runtime instead of a config to share one (and close it with `runtime.close()`).
 */
export function createLocalHandlers(
  config: RuntimeConfig | Runtime,
  deps: RuntimeDeps = {},
): { readonly runtime: Runtime; readonly handlers: LocalHandlers } {
  const rt = config instanceof Runtime ? config : new Runtime(config, deps);
  return { runtime: rt, handlers: Object.fromEntries(STEP_HANDLER_TABLE.map((h) => [h.functionName, CREATE[h.id](rt)])) };
}
