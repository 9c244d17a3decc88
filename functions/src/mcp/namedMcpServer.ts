import type { Runtime } from '../runtime/Runtime.js';
import { isRecord } from '../steps/isRecord.js';

/** What to do about a server name defined nowhere, for the error that names it. */
export const UNDEFINED_MCP_SERVER_HINT = "give it a {url} or {command, args} under the document's mcp_servers, or in STEPFORGE_MCP_SERVERS";

/**
 * A named MCP server's settings where it is defined, last wins: the workflow document's own
 * `mcp_servers` entries (`declared`, compiled into the step's config), the deployment's
 * STEPFORGE_MCP_SERVERS (a URL of this environment), then a step's own `overrides`. Undefined when
 * it is defined nowhere.
 */
export function namedMcpServer(rt: Runtime, name: string, declared: unknown, overrides?: unknown): unknown {
  const pick = (m: unknown) => (isRecord(m) && Object.prototype.hasOwnProperty.call(m, name) ? m[name] : undefined);
  return pick(overrides) ?? pick(rt.config.mcpServers) ?? pick(declared);
}
