/** `mcp.<server>.<tool>` (or `mcp:<server>.<tool>`): how an agent is granted a tool of an MCP server. */
const MCP_TOOL = /^mcp[.:]([^.]+)\.(.+)$/;

/** The server and tool an agent grant of an MCP tool names, or undefined for any other name. */
export function mcpToolName(name: string): { readonly server: string; readonly tool: string } | undefined {
  const m = MCP_TOOL.exec(name);
  return m ? { server: m[1]!, tool: m[2]! } : undefined;
}
