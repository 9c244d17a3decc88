import { didYouMean } from './didYouMean.js';

/** The fields of an MCP server reached over HTTP. */
export const HTTP_MCP_SERVER_FIELDS: readonly string[] = ['url', 'headers'];
/** The fields of a stdio MCP server, started as a process. */
export const STDIO_MCP_SERVER_FIELDS: readonly string[] = ['command', 'args', 'env', 'cwd'];

/** How an MCP server is configured, said in every error about one. */
export const MCP_SERVER_SHAPE =
  'an MCP server is {"url": "http…", "headers"?: {…}} or {"command": "…", "args"?: [...], "env"?: {…}, "cwd"?: "…"}';

/** What is wrong with one MCP server's configuration: the field (absent: the server as a whole) and why. */
export interface McpServerProblem {
  readonly field?: string;
  readonly message: string;
}

const stringMap = (v: unknown) =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');

/**
 * Checks one MCP server as configured by the project (`mcpServers` in its settings file, or
 * STEPFORGE_MCP_SERVERS): `{url, headers?}` or `{command, args?, env?, cwd?}`, nothing else, so a
 * misspelt `comand` is refused when the configuration is read, not found mid-run as a server with
 * no command. Undefined: the server is well formed.
 */
export function mcpServerProblem(server: unknown): McpServerProblem | undefined {
  if (server === null || typeof server !== 'object' || Array.isArray(server))
    return { message: `must be an object, got ${JSON.stringify(server)}` };
  const s = server as Record<string, unknown>;
  const kind = 'url' in s ? HTTP_MCP_SERVER_FIELDS : 'command' in s ? STDIO_MCP_SERVER_FIELDS : undefined;
  const allowed = kind ?? [...HTTP_MCP_SERVER_FIELDS, ...STDIO_MCP_SERVER_FIELDS];
  for (const key of Object.keys(s)) {
    if (allowed.includes(key)) continue;
    const near = didYouMean(key, allowed);
    return { field: key, message: `unknown field '${key}'${near ? ` (did you mean '${near}'?)` : ''}` };
  }
  if (kind === undefined) return { message: 'needs "url" (a server over HTTP) or "command" (a stdio server)' };
  if (kind === HTTP_MCP_SERVER_FIELDS) {
    if (typeof s.url !== 'string' || !URL.canParse(s.url)) return { field: 'url', message: `must be a URL, got ${JSON.stringify(s.url)}` };
    if (s.headers !== undefined && !stringMap(s.headers)) return { field: 'headers', message: 'must be an object of header name → string' };
    return undefined;
  }
  if (typeof s.command !== 'string' || s.command === '')
    return { field: 'command', message: `must be a non-empty string, got ${JSON.stringify(s.command)}` };
  if (s.args !== undefined && !(Array.isArray(s.args) && s.args.every((a) => typeof a === 'string')))
    return { field: 'args', message: 'must be a list of strings' };
  if (s.env !== undefined && !stringMap(s.env)) return { field: 'env', message: 'must be an object of variable name → string' };
  if (s.cwd !== undefined && typeof s.cwd !== 'string') return { field: 'cwd', message: 'must be a string' };
  return undefined;
}
