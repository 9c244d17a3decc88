// What the Lambda bundles put where the MCP SDK imports `pkce-challenge` and `zod-to-json-schema`
// (aliased in infra/lib/bundling/handlerBundling.ts). The SDK's client modules import them for code
// a Stepforge MCP client never runs: PKCE for the OAuth flow of a transport given an auth provider
// (the runtime gives MCP servers headers, never an auth provider), and JSON Schema for the zod v3
// schemas of a server's tools (the runtime is no MCP server). Were either ever called, it fails with
// a ConfigError saying so rather than running without them.
import { RuntimeError } from '../errors/RuntimeError.js';

function unreachable(what: string): never {
  throw new RuntimeError(
    'ConfigError',
    `the Lambda bundles carry no ${what}: Stepforge's MCP clients reach servers with the headers their configuration gives, and serve no tools`,
  );
}

/** pkce-challenge's default export (an OAuth authorization's code challenge). */
export default async function pkceChallenge(): Promise<never> {
  return unreachable('PKCE challenge (OAuth authorization of MCP servers)');
}

/** zod-to-json-schema's converter (an MCP server's tool schemas written with zod v3). */
export function zodToJsonSchema(): never {
  return unreachable('zod v3 to JSON Schema converter (MCP server tool listings)');
}
