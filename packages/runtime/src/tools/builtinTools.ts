import type { RuntimeConfig } from '../config/RuntimeConfig.js';
import { provideBuiltinTools } from '../runtime/Runtime.js';
import { echoTool } from './echoTool.js';
import { fsListTool, fsReadTool } from './fsTools.js';
import { httpFetchTool, webSearchTool } from './httpTools.js';
import { shellTool } from './shellTool.js';
import { ToolRegistry } from './ToolDefinition.js';

/** The built-in tools configured from the RuntimeConfig (shell only when embedded). */
export function builtinTools(config: RuntimeConfig): ToolRegistry {
  // The secret store is out of every tool's reach wherever it is configured (the state folder always is).
  const protectedPaths = [config.secrets.file];
  const fs = { root: config.tools.fsRoot, maxReadBytes: config.tools.fsMaxReadBytes, protectedPaths };
  return new ToolRegistry()
    .register(
      httpFetchTool({ allowHosts: config.tools.httpAllowHosts, allowPrivateNetworks: config.tools.httpAllowPrivateNetworks ?? false }),
    )
    .register(webSearchTool({ url: config.tools.webSearchUrl }))
    .register(fsListTool(fs))
    .register(fsReadTool(fs))
    .register(echoTool())
    .register(
      shellTool({
        enabled: config.tools.shellEnabled && config.mode === 'embedded',
        allow: config.tools.shellAllow,
        deny: config.tools.shellDeny,
        cwd: config.tools.fsRoot,
        protectedPaths,
      }),
    );
}

// Imported for this by the modules that call tools (the model and tool steps): see provideBuiltinTools.
provideBuiltinTools(builtinTools);
