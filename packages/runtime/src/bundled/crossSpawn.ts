// What the Lambda bundles put where the MCP SDK's stdio transport imports `cross-spawn` (aliased in
// infra/lib/bundling/handlerBundling.ts). cross-spawn exists for Windows (resolving commands through
// PATHEXT, shebangs and cmd.exe escaping) and brings `which`, `isexe`, `path-key` and the shebang
// parsers for it (~6 KiB of every handler that reaches MCP servers); on Linux, where Lambda runs, its
// spawn is child_process.spawn over copies of the arguments and options, which is what this is.
import { spawn as spawnChild, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { RuntimeError } from '../errors/RuntimeError.js';

/** cross-spawn's `spawn` as it behaves off Windows: arguments may be left out, options given in their place. */
export default function spawn(command: string, args?: readonly string[] | SpawnOptions, options?: SpawnOptions): ChildProcess {
  if (process.platform === 'win32')
    throw new RuntimeError(
      'ConfigError',
      'the Lambda bundles spawn MCP servers as on Linux; run Windows builds without the cross-spawn alias',
    );
  if (args && !Array.isArray(args)) {
    options = args as SpawnOptions;
    args = undefined;
  }
  return spawnChild(command, args ? [...(args as readonly string[])] : [], { ...options });
}
