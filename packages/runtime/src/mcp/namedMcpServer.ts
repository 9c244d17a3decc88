import { RuntimeError } from '../errors/RuntimeError.js';
import type { Runtime } from '../runtime/Runtime.js';
import { isRecord } from '../steps/isRecord.js';

/** What to do about a server name defined nowhere, for the error that names it. */
export const UNDEFINED_MCP_SERVER_HINT = "give it a {url} or {command, args} under the document's mcp_servers, or in STEPFORGE_MCP_SERVERS";

/** Where the settings of a named MCP server come from. */
export interface NamedMcpServer {
  readonly raw: unknown;
  /**
   * True when the settings are the project's or the deployment's own (RuntimeConfig.mcpServers:
   * STEPFORGE_MCP_SERVERS, the project's stepforge.config.json), false when a workflow document or a
   * step's envelope supplied them.
   */
  readonly fromProject: boolean;
}

/**
 * A named MCP server's settings where it is defined: the deployment's or project's own
 * (RuntimeConfig.mcpServers) win, so a project can point a declared server elsewhere; then a
 * step's own `overrides`, then the workflow document's `mcp_servers` entries (`declared`, compiled
 * into the step's config). Undefined when it is defined nowhere.
 */
export function namedMcpServer(rt: Runtime, name: string, declared: unknown, overrides?: unknown): NamedMcpServer | undefined {
  const pick = (m: unknown) => (isRecord(m) && Object.prototype.hasOwnProperty.call(m, name) ? m[name] : undefined);
  const project = pick(rt.config.mcpServers);
  if (project !== undefined) return { raw: project, fromProject: true };
  const raw = pick(overrides) ?? pick(declared);
  return raw === undefined ? undefined : { raw, fromProject: false };
}

/**
 * Refuses a stdio MCP server whose command a workflow named. Starting one runs that command as
 * the user, with no shell-tool policy in between, so a workflow document (which may come from
 * anyone) could run `sh -c …` through it: the commands of stdio servers come only from the
 * project's configuration. Servers reached over HTTP may be declared by the document.
 */
export function refuseWorkflowCommand(server: unknown, name: string, fromProject: boolean): void {
  if (fromProject || !isRecord(server) || !('command' in server)) return;
  throw new RuntimeError(
    'PolicyDenied',
    `MCP server "${name}": the workflow names the command '${String(server.command)}' to start it, and workflows may not start processes: a stdio MCP server's command comes only from the project's configuration; define "${name}" under "mcpServers" in stepforge.config.json at the project root (or in STEPFORGE_MCP_SERVERS), or reach the server over HTTP ({url})`,
    {
      details: { code: 'mcp_command_not_configured', server: name, command: server.command },
    },
  );
}
