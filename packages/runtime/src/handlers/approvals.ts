import middy from '@middy/core';
import * as z from 'zod';
import { decideApproval, expireDueApprovals, publicApproval } from '../approvals/approvals.js';
import { RuntimeError } from '../errors/RuntimeError.js';
import { logStep, redactSecrets } from '../middleware/middlewares.js';
import type { StepContext } from '../middleware/defineMiddleware.js';
import type { Runtime } from '../runtime/Runtime.js';
import { lazyHandler } from './lazyHandler.js';
import type { StepHandler } from './stepHandler.js';
// Deciding or expiring an approval answers its task token (see steps/approvalAnswerer.ts).
import '../steps/toolStep.js';

/** A direct approvals command (CLI / console / API Gateway integration). */
export const ApprovalCommand = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('list'), status: z.enum(['PENDING', 'APPROVED', 'REJECTED', 'TIMED_OUT']).optional() }),
  z.strictObject({ action: z.literal('approve'), approvalId: z.string().min(1), by: z.string().optional(), reason: z.string().optional() }),
  z.strictObject({ action: z.literal('reject'), approvalId: z.string().min(1), by: z.string().optional(), reason: z.string().optional() }),
  z.strictObject({ action: z.literal('expire') }),
]);

/** How a run ended, as its record says (the approvals Lambda reads no executions). */
const endedStatusOf =
  (rt: Runtime) =>
  async (runId: string): Promise<string | undefined> => {
    const run = await rt.runs.getRun(runId);
    return run && run.status !== 'RUNNING' ? run.status : undefined;
  };

/**
 * Approvals: `list`, `approve` (runs the gated call and answers its task token), `reject`,
 * and `expire` (also on any scheduled EventBridge event): PENDING approvals past their deadline
 * become TIMED_OUT and their task tokens fail with `ApprovalRejected` — a timeout is a denial.
 * SQS records (the approval queue) are acknowledged and logged: the record was written before the message.
 * The rules are approvals/approvals.ts's, as for the CLI and the HTTP API.
 */
export async function handleApprovals(rt: Runtime, event: unknown): Promise<unknown> {
  const e = event as Record<string, unknown>;
  if (Array.isArray(e.Records)) {
    for (const r of e.Records as { messageId: string; body: string }[]) {
      const msg = JSON.parse(r.body) as { approvalId?: string; tool?: string; runId?: string };
      rt.logger.info('approval requested', { approvalId: msg.approvalId, tool: msg.tool, runId: msg.runId });
    }
    return { batchItemFailures: [] };
  }
  const cmd = e.source === 'aws.events' ? { action: 'expire' as const } : ApprovalCommand.safeParse(event).data;
  if (!cmd) throw new RuntimeError('InvalidInput', `approvals: unrecognised command ${JSON.stringify(event).slice(0, 200)}`);
  switch (cmd.action) {
    case 'list':
      return { approvals: (await rt.approvals.list(cmd.status ?? 'PENDING')).map(publicApproval) };
    case 'approve':
    case 'reject': {
      const decided = await decideApproval(rt, cmd.approvalId, cmd.action === 'approve' ? 'APPROVED' : 'REJECTED', {
        ...(cmd.by !== undefined ? { by: cmd.by } : {}),
        ...(cmd.reason !== undefined ? { comment: cmd.reason } : {}),
        endedStatusOf: endedStatusOf(rt),
      });
      return {
        approvalId: cmd.approvalId,
        status: decided.approval.status,
        ...(decided.result !== undefined ? { result: decided.result } : {}),
        delivered: decided.delivered,
      };
    }
    case 'expire':
      return { expired: await expireDueApprovals(rt) };
  }
}

/** The approvals handler. */
export function createApprovalsHandler(rt: Runtime): StepHandler {
  const h = middy<unknown, unknown, Error, StepContext>(async (event: unknown) => handleApprovals(rt, event))
    .use(logStep({ runtime: rt, handler: 'approvals' }))
    .use(redactSecrets({ runtime: rt }));
  return (event, context) => h(event, { ...((context as object | undefined) ?? {}) } as StepContext);
}

/** Lambda entry point. */
export const handler = lazyHandler(createApprovalsHandler);
