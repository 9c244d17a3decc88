import type { RuntimeConfig } from './config/RuntimeConfig.js';
import { createConnectorHandler } from './handlers/connector.js';
import { createFunctionHandler } from './handlers/function.js';
import { createMcpToolHandler } from './handlers/mcp_tool.js';
import { createModelHandler } from './handlers/model.js';
import { createToolHandler } from './handlers/tool.js';
import { Runtime, type RuntimeDeps } from './runtime/Runtime.js';

/** The step handlers by the function names the ASL placeholders name (`${ModelStepFunctionArn}` → `ModelStepFunction`). */
export interface LocalHandlers {
  readonly ModelStepFunction: (event: unknown, context?: unknown) => Promise<unknown>;
  readonly ToolStepFunction: (event: unknown, context?: unknown) => Promise<unknown>;
  readonly ConnectorStepFunction: (event: unknown, context?: unknown) => Promise<unknown>;
  readonly FunctionStepFunction: (event: unknown, context?: unknown) => Promise<unknown>;
  readonly McpToolStepFunction: (event: unknown, context?: unknown) => Promise<unknown>;
}

/**
 * The embedded stack's handler map: the same middy handlers Lambda runs, over one Runtime
 * built from `config` (pointed at the loopback emulators). The engine registers these by name.
 * Pass a Runtime instead of a config to share one (and close it with `runtime.close()`).
 */
export function createLocalHandlers(config: RuntimeConfig | Runtime, deps: RuntimeDeps = {}): LocalHandlers & { readonly runtime: Runtime } {
  const rt = config instanceof Runtime ? config : new Runtime(config, deps);
  return {
    runtime: rt,
    ModelStepFunction: createModelHandler(rt),
    ToolStepFunction: createToolHandler(rt),
    ConnectorStepFunction: createConnectorHandler(rt),
    FunctionStepFunction: createFunctionHandler(rt),
    McpToolStepFunction: createMcpToolHandler(rt),
  };
}
