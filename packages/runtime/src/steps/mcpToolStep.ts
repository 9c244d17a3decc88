import type { StepEnvelope, StepResult } from '@stepforge/contract';
import { RuntimeError } from '../errors/RuntimeError.js';
import { parseMcpServer } from '../mcp/McpClientPool.js';
import '../mcp/mcpSdk.js';
import { UNDEFINED_MCP_SERVER_HINT, namedMcpServer, refuseWorkflowCommand } from '../mcp/namedMcpServer.js';
import { executeStep } from '../runtime/executeStep.js';
import { isRecord } from './isRecord.js';
import type { Runtime } from '../runtime/Runtime.js';
import { resolveInputs } from './resolveInputs.js';

/**
 * An mcp_tool step: `config.server` (a name from the document's / runtime's `mcp_servers`, or an
 * inline `{url}` / `{command, args}`), `config.tool`, and arguments from the resolved value or
 * `config.args`. Marked as dispatched before the call (an MCP tool may have side effects) unless
 * `config.read_only` says otherwise.
 */
export async function runMcpToolStep(rt: Runtime, rawEnv: StepEnvelope): Promise<StepResult> {
  const env = await resolveInputs(rt, rawEnv);
  const serverRef = env.config.server;
  // A named server as the project, the step or the document defines it (see namedMcpServer); an
  // inline one is the workflow's own.
  const named =
    typeof serverRef === 'string'
      ? namedMcpServer(
          rt,
          serverRef,
          isRecord(env.config.serverConfig) ? { [serverRef]: env.config.serverConfig } : undefined,
          env.config.servers,
        )
      : serverRef === undefined
        ? undefined
        : { raw: serverRef, fromProject: false };
  if (named === undefined) {
    throw new RuntimeError(
      'ConfigError',
      `mcp_tool step ${env.step.id}: unknown MCP server "${String(serverRef)}": ${UNDEFINED_MCP_SERVER_HINT}`,
    );
  }
  const serverName = String(typeof serverRef === 'string' ? serverRef : 'inline');
  // Before anything is resolved, claimed or started: the step fails as refused, and no process runs.
  refuseWorkflowCommand(named.raw, serverName, named.fromProject);
  const server = parseMcpServer(await rt.secrets.resolveDeep(named.raw), serverName);
  const tool = env.config.tool;
  if (typeof tool !== 'string') throw new RuntimeError('InvalidEnvelope', 'mcp_tool step has no config.tool');
  const rawArgs = env.inputs.value ?? env.config.args ?? {};
  if (rawArgs === null || typeof rawArgs !== 'object' || Array.isArray(rawArgs))
    throw new RuntimeError('InvalidInput', 'mcp_tool arguments must be an object');
  const readOnly = env.config.read_only === true;
  const done = await executeStep(rt, env, { idempotent: readOnly, claimsAtDispatch: true }, async (guard) => {
    const args = await rt.secrets.resolveDeep(rawArgs as Record<string, unknown>);
    if (!readOnly) await guard.dispatch(`MCP tool ${tool} on ${'url' in server ? server.url : server.command}`);
    const r = await rt.mcp.callTool(server, tool, args);
    return { output: r.content };
  });
  return { status: done.status, output: done.output, ...(done.outputRef ? { outputRef: done.outputRef } : {}), usage: done.usage };
}
