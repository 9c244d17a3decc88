import { mcpToolName, type StepEnvelope, type StepResult, type ToolCallResult } from '@stepforge/contract';
import { RuntimeError, isRuntimeError } from '../errors/RuntimeError.js';
import { parseMcpServer } from '../mcp/McpClientPool.js';
import '../mcp/mcpSdk.js';
import { UNDEFINED_MCP_SERVER_HINT, namedMcpServer, refuseWorkflowCommand } from '../mcp/namedMcpServer.js';
import { approvalIdFor, type ApprovalRecord } from '../persistence/ApprovalStore.js';
import { provideApprovalAnswerer } from './approvalAnswerer.js';
import { effectiveStatus } from '../persistence/IdempotencyRecord.js';
import { executeStep, stepIdempotencyKey, stepInstanceId } from '../runtime/executeStep.js';
import type { Runtime } from '../runtime/Runtime.js';
// The built-in tools this step calls or offers (see provideBuiltinTools).
import '../tools/builtinTools.js';
import { stepFunctions } from '../runtime/sfnClient.js';
import type { ToolDefinition } from '../tools/ToolDefinition.js';
import { evaluatePolicy } from '../tools/ToolPolicy.js';
import { narrowedTool } from '../tools/taskToolPolicy.js';
import { resolveInputs } from './resolveInputs.js';

/** What one tool invocation is: which tool, with what, on behalf of which step. */
interface ToolInvocation {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /** The agent loop's call id, when the model proposed the call. */
  readonly callId?: string;
}

function invocationOf(env: StepEnvelope): ToolInvocation {
  if (env.toolCall) {
    const args = env.toolCall.args;
    return {
      tool: env.toolCall.tool,
      args: args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {},
      callId: env.toolCall.id,
    };
  }
  const tool = env.config.tool;
  if (typeof tool !== 'string' || tool.length === 0) throw new RuntimeError('InvalidEnvelope', 'tool step has no config.tool');
  const v = env.inputs.value ?? env.config.args ?? {};
  return { tool, args: v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {} };
}

/**
 * The MCP tool an agent grant names, on its server as the document (the step's `config.mcpServers`)
 * or the deployment defines it (see namedMcpServer). Undefined for a name that is not an MCP
 * tool's; UnknownTool for one whose server is defined nowhere.
 */
function mcpToolDefinition(rt: Runtime, env: StepEnvelope, name: string): ToolDefinition | undefined {
  const named = mcpToolName(name);
  if (!named) return undefined;
  const { server: serverName, tool: toolName } = named;
  const server = namedMcpServer(rt, serverName, env.config.mcpServers);
  if (server === undefined) {
    throw new RuntimeError('UnknownTool', `MCP tool "${name}": unknown MCP server "${serverName}": ${UNDEFINED_MCP_SERVER_HINT}`, {
      details: { tool: name, server: serverName },
    });
  }
  // Refused (and recorded, by definedMcpTool) before the tool exists, so no process is started.
  refuseWorkflowCommand(server.raw, serverName, server.fromProject);
  return {
    name,
    description: `MCP tool ${toolName} on ${serverName}`,
    inputSchema: { type: 'object' },
    sideEffect: true,
    async run(args, ctx) {
      const config = parseMcpServer(await rt.secrets.resolveDeep(server.raw), serverName);
      await ctx.guard.dispatch(`MCP ${serverName}.${toolName}`);
      return (await rt.mcp.callTool(config, toolName, args)).content;
    },
  };
}

/** An agent grant's MCP tool (see mcpToolDefinition); one on a server defined nowhere is refused, and recorded as the other refusals are. */
async function definedMcpTool(rt: Runtime, env: StepEnvelope, inv: ToolInvocation): Promise<ToolDefinition | undefined> {
  try {
    return mcpToolDefinition(rt, env, inv.tool);
  } catch (e) {
    if (isRuntimeError(e)) await refuse(rt, env, inv, e);
    throw e;
  }
}

async function refuse(rt: Runtime, env: StepEnvelope, inv: ToolInvocation, err: RuntimeError): Promise<never> {
  await rt.runs.recordEvent({
    runId: env.run.id,
    stepId: stepInstanceId(env),
    type: err.name,
    detail: { tool: inv.tool, callId: inv.callId, args: inv.args, message: err.message, ...(err.details ?? {}) },
  });
  throw err;
}

/**
 * Authorises one tool call: granted to the step (else `ToolNotGranted`), known, arguments under
 * the size cap, and the approval policy (first matching rule: allow / deny / approve).
 * Refusals are recorded as run events before they are thrown.
 */
export async function authorizeToolCall(
  rt: Runtime,
  env: StepEnvelope,
  inv: ToolInvocation,
): Promise<{ tool: ToolDefinition; decision: ReturnType<typeof evaluatePolicy> }> {
  const granted = env.toolCall ? env.tools.includes(inv.tool) : env.tools.length === 0 || env.tools.includes(inv.tool);
  if (!granted) {
    await refuse(
      rt,
      env,
      inv,
      new RuntimeError(
        'ToolNotGranted',
        `step ${env.step.id} is not granted tool "${inv.tool}" (granted: ${env.tools.join(', ') || 'none'})`,
        { details: { tool: inv.tool, granted: env.tools } },
      ),
    );
  }
  const bytes = Buffer.byteLength(JSON.stringify(inv.args));
  if (bytes > rt.config.tools.maxArgsBytes) {
    await refuse(
      rt,
      env,
      inv,
      new RuntimeError(
        'PolicyDenied',
        `tool "${inv.tool}" arguments are ${bytes} bytes, over the ${rt.config.tools.maxArgsBytes}-byte limit`,
        { details: { bytes, limit: rt.config.tools.maxArgsBytes, reason: 'oversized' } },
      ),
    );
  }
  // A task's own tools_policies narrow the project's policy for this call (see taskToolPolicy).
  const narrowed = rt.tools.has(inv.tool)
    ? await narrowedTool(rt.config, env.config, inv.tool).catch((e: unknown) =>
        isRuntimeError(e) ? refuse(rt, env, inv, e) : Promise.reject(e),
      )
    : undefined;
  const tool = narrowed ?? rt.tools.get(inv.tool) ?? (await definedMcpTool(rt, env, inv));
  if (!tool)
    await refuse(
      rt,
      env,
      inv,
      new RuntimeError('UnknownTool', `no tool named "${inv.tool}" is installed`, { details: { tool: inv.tool } }),
    );
  const decision = evaluatePolicy(await rt.policyFor(env.run.id), inv.tool, inv.args, { fsRoot: rt.config.tools.fsRoot });
  if (decision.action === 'deny') {
    const message = decision.reason ? `policy denies ${inv.tool}: ${decision.reason}` : `policy ${decision.rule} denies ${inv.tool}`;
    await refuse(
      rt,
      env,
      inv,
      new RuntimeError('PolicyDenied', message, {
        details: { tool: inv.tool, rule: decision.rule, ...(decision.reason ? { reason: 'unparseable' } : {}) },
      }),
    );
  }
  return { tool: tool as ToolDefinition, decision };
}

/** The part of a step's idempotency key that tells its tool calls apart: an agent's call id. */
function callSub(inv: ToolInvocation): string | undefined {
  return inv.callId ? `call:${inv.callId}` : undefined;
}

/**
 * Whether a gated call was approved and made already under its step key, though not for this task
 * token: by the parent run a fork carried the result over from, or by an earlier attempt of the
 * state (a Step Functions retry dispatches with a new token). It answers that result rather than
 * asking a human again for a call that will not be made again. A token that asked already goes on
 * with its own approval, whatever its state (see requestApproval).
 */
async function madeAlready(rt: Runtime, env: StepEnvelope, inv: ToolInvocation, taskToken: string): Promise<boolean> {
  const record = await rt.idempotency.getRecord(stepIdempotencyKey(env, callSub(inv)));
  if (record === undefined || effectiveStatus(record, rt.config.clock()) !== 'COMPLETED') return false;
  return (await rt.approvals.get(approvalIdFor(taskToken))) === undefined;
}

/** Runs an authorised call under the step's idempotency guard, with secrets resolved for the call only. */
export async function performToolCall(
  rt: Runtime,
  env: StepEnvelope,
  inv: ToolInvocation,
  tool: ToolDefinition,
): Promise<{ result: unknown; status: 'succeeded' | 'reused' }> {
  const done = await executeStep(
    rt,
    env,
    { sub: callSub(inv), idempotent: tool.idempotent?.(inv.args) ?? !tool.sideEffect, claimsAtDispatch: true },
    async (guard) => {
      // Every secret of the project, so that one the tool meets some other way (a copy of it in a
      // file it reads) is redacted from its output as well as those its arguments name.
      await rt.secrets.registerKnown();
      const args = await rt.secrets.resolveDeep(inv.args);
      try {
        return { output: await tool.run(args, { runtime: rt, runId: env.run.id, stepId: env.step.id, guard }) };
      } catch (e) {
        if (isRuntimeError(e) && (e.name === 'PolicyDenied' || e.name === 'ToolNotGranted')) {
          await rt.runs.recordEvent({
            runId: env.run.id,
            stepId: stepInstanceId(env),
            type: e.name,
            detail: { tool: inv.tool, callId: inv.callId, args: inv.args, message: e.message, ...(e.details ?? {}) },
          });
        }
        throw e;
      }
    },
  );
  const result = done.outputRef ? { $ref: done.outputRef } : done.output;
  return { result, status: done.status };
}

/**
 * The tool handler's body. A plain tool step answers a StepResult and throws on refusal; a
 * call proposed by an agent answers a ToolCallResult whose `error` the model sees (refusals are
 * recorded either way). Invoked with a task token (`.waitForTaskToken`), it answers through the
 * token, and a call the policy gates waits for a human: an approval record plus an SQS message.
 */
export async function runToolStep(
  rt: Runtime,
  rawEnv: StepEnvelope,
  taskToken?: string,
): Promise<StepResult | ToolCallResult | { status: 'waiting_approval'; approvalId: string }> {
  const env = await resolveInputs(rt, rawEnv);
  const inv = invocationOf(env);
  let answer: StepResult | ToolCallResult;
  try {
    const { tool, decision } = await authorizeToolCall(rt, env, inv);
    if (decision.action === 'approve' && !(taskToken && (await madeAlready(rt, env, inv, taskToken)))) {
      if (!taskToken) {
        await refuse(
          rt,
          env,
          inv,
          new RuntimeError(
            'PolicyDenied',
            `policy ${decision.rule} requires human approval for ${inv.tool}, but this state does not wait for a task token`,
            { details: { rule: decision.rule } },
          ),
        );
      }
      const approval = await requestApproval(rt, rawEnv, inv, taskToken as string, decision.rule, decision.timeoutSeconds);
      // Decided before this dispatch of the task: its answer went to the token already, to an
      // engine that has since stopped (the execution resumed from a checkpoint before it), or is
      // going there now. The token waits again, so the decision is answered again.
      if (approval.status !== 'PENDING') await answerApproval(rt, approval, rawEnv);
      return { status: 'waiting_approval', approvalId: approval.approvalId };
    }
    answer = await answerFor(rt, env, inv, tool);
  } catch (e) {
    if (
      env.toolCall &&
      isRuntimeError(e) &&
      ['ToolNotGranted', 'PolicyDenied', 'UnknownTool', 'ToolError', 'InvalidInput'].includes(e.name)
    ) {
      answer = { id: inv.callId as string, tool: inv.tool, result: null, error: { name: e.name, message: e.message } };
    } else {
      if (taskToken) {
        // Not an error when the token was failed already (answerApproval fails it on the way).
        await toToken(() => sendTaskFailure(rt, taskToken, e as Error));
        return { status: 'failed', error: { name: (e as Error).name, message: (e as Error).message } } as unknown as StepResult;
      }
      throw e;
    }
  }
  if (taskToken) {
    const { sdk, client } = await stepFunctions(rt);
    await client.send(new sdk.SendTaskSuccessCommand({ taskToken, output: JSON.stringify(rt.redactor.redact(answer)) }));
  }
  return answer;
}

async function answerFor(rt: Runtime, env: StepEnvelope, inv: ToolInvocation, tool: ToolDefinition): Promise<StepResult | ToolCallResult> {
  const { result, status } = await performToolCall(rt, env, inv, tool);
  if (env.toolCall) return { ...(status === 'reused' ? { status } : {}), id: inv.callId as string, tool: inv.tool, result };
  const isRef = result !== null && typeof result === 'object' && '$ref' in result;
  return {
    status,
    output: result,
    ...(isRef ? { outputRef: (result as { $ref: StepResult['outputRef'] }).$ref } : {}),
    usage: { inputTokens: 0, outputTokens: 0 },
  };
}

async function sendTaskFailure(rt: Runtime, taskToken: string, e: Error): Promise<void> {
  const { sdk, client } = await stepFunctions(rt);
  await client.send(
    new sdk.SendTaskFailureCommand({
      taskToken,
      error: e.name,
      cause: rt.redactor.redactText(e.message).slice(0, 32_000),
    }),
  );
}

/**
 * Records a PENDING approval (with the envelope, secrets still as references) and announces it (a
 * run event and a message on the approval queue), once per task token: a task dispatched again
 * with the same token gets the approval it asked for the first time, in whatever state it is now.
 * It announces that one again only if it was never marked announced: the process that recorded it
 * ended before announcing it, and otherwise nobody would hear of it. So announcing is at least once
 * (twice if that process ended between sending the message and marking it).
 */
async function requestApproval(
  rt: Runtime,
  env: StepEnvelope,
  inv: ToolInvocation,
  taskToken: string,
  rule?: string,
  ruleTimeoutSeconds?: number,
): Promise<ApprovalRecord> {
  const { record: rec, announced } = await rt.approvals.request({
    runId: env.run.id,
    stepId: stepInstanceId(env),
    tool: inv.tool,
    args: inv.args,
    taskToken,
    // The rule's own deadline, never past the runtime's (the operator's ceiling).
    timeoutSeconds: Math.min(ruleTimeoutSeconds ?? rt.config.approvalTimeoutSeconds, rt.config.approvalTimeoutSeconds),
    envelope: JSON.stringify(env),
    ...(rule ? { rule } : {}),
  });
  if (announced || rec.status !== 'PENDING') return rec;
  await rt.runs.recordEvent({
    runId: env.run.id,
    stepId: stepInstanceId(env),
    type: 'ApprovalRequested',
    detail: { approvalId: rec.approvalId, tool: inv.tool, args: inv.args, rule },
  });
  if (rt.config.approvalQueueUrl) {
    // Loaded here: a process whose workflows ask for no approval (most `stepforge run`s) never compiles the SQS client.
    const [{ SendMessageCommand }, { sqsClient }] = await Promise.all([import('@aws-sdk/client-sqs'), import('../runtime/sqsClient.js')]);
    await sqsClient(rt).send(
      new SendMessageCommand({
        QueueUrl: rt.config.approvalQueueUrl,
        MessageBody: JSON.stringify(
          rt.redactor.redact({
            type: 'stepforge.approval',
            approvalId: rec.approvalId,
            runId: env.run.id,
            stepId: rec.stepId,
            workflow: env.run.workflow,
            tool: inv.tool,
            args: inv.args,
            rule,
            taskToken,
            expiresAt: rec.expiresAt,
          }),
        ),
      }),
    );
  }
  await rt.approvals.announced(rec.approvalId);
  return rec;
}

/**
 * Answers a decided approval's task token: APPROVED runs the tool call in `env` (once per step
 * key, so a second answer reuses the first one's result) if the task still waits, and sends its
 * result; anything else fails the token with `ApprovalRejected`. A token that is already answered, or that no execution waits on now, is
 * not an error here (`delivered: false`); nor is a call that another answer of the same approval
 * is running at this moment (that one sends its result).
 */
export async function answerApproval(
  rt: Runtime,
  rec: ApprovalRecord,
  env?: StepEnvelope,
): Promise<{ delivered: boolean; result?: unknown }> {
  if (rec.status !== 'APPROVED') {
    const rejection = new RuntimeError(
      'ApprovalRejected',
      rec.status === 'TIMED_OUT'
        ? `approval ${rec.approvalId} timed out (a timeout is a denial)`
        : `approval ${rec.approvalId} was rejected${rec.reason ? `: ${rec.reason}` : ''}`,
    );
    return { delivered: await toToken(() => sendTaskFailure(rt, rec.taskToken, rejection)) };
  }
  if (!env)
    throw new RuntimeError(
      'InvalidInput',
      `approval ${rec.approvalId} was approved, but its record keeps no step envelope to run the call with`,
    );
  // The call runs only for a task that still waits on its token. One that is closed (the run was
  // cancelled or timed out, or the task answered) must not cause it; one no execution waits on now
  // (its process ended) causes it when the execution resumes and asks again.
  const { sdk, client } = await stepFunctions(rt);
  if (!(await toToken(() => client.send(new sdk.SendTaskHeartbeatCommand({ taskToken: rec.taskToken }))))) return { delivered: false };
  const resolved = await resolveInputs(rt, env);
  const inv = invocationOf(resolved);
  let answer: StepResult | ToolCallResult;
  try {
    const tool =
      (rt.tools.has(inv.tool) ? await narrowedTool(rt.config, resolved.config, inv.tool) : undefined) ??
      rt.tools.get(inv.tool) ??
      mcpToolDefinition(rt, resolved, inv.tool);
    if (!tool) throw new RuntimeError('UnknownTool', `no tool named "${inv.tool}" is installed`);
    answer = await answerFor(rt, resolved, inv, tool);
  } catch (e) {
    if ((e as { name?: string }).name === 'StepInProgress') return { delivered: false };
    await toToken(() => sendTaskFailure(rt, rec.taskToken, e as Error));
    throw e;
  }
  const result = rt.redactor.redact(answer);
  const delivered = await toToken(() =>
    client.send(new sdk.SendTaskSuccessCommand({ taskToken: rec.taskToken, output: JSON.stringify(result) })),
  );
  return { delivered, result };
}

provideApprovalAnswerer(answerApproval);

/** Step Functions' answers for a token nothing waits on: closed already, or unknown to it now. */
const UNANSWERABLE = new Set(['TaskTimedOut', 'TaskDoesNotExist']);

/** Sends an answer to a task token; false when no task waits on it (see UNANSWERABLE). */
async function toToken(send: () => Promise<unknown>): Promise<boolean> {
  try {
    await send();
    return true;
  } catch (e) {
    if (UNANSWERABLE.has((e as { name?: string }).name ?? '')) return false;
    throw e;
  }
}
