// Imported for its effect by the modules that call MCP servers: it hands the pool the MCP SDK,
// loaded when the first server is reached (the SDK takes about a quarter of the runtime package's
// load time, and most runs call no MCP server). A Lambda whose code never imports this file
// carries no MCP SDK in its bundle.
import { provideMcpSdk } from './McpClientPool.js';

provideMcpSdk(async () => {
  const [{ Client }, { StdioClientTransport }, { StreamableHTTPClientTransport }, { CfWorkerJsonSchemaValidator }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/validation/cfworker'),
  ]);
  return { Client, StdioClientTransport, StreamableHTTPClientTransport, JsonSchemaValidator: CfWorkerJsonSchemaValidator };
});
