import middy from '@middy/core';
import * as z from 'zod';
import { RuntimeError } from '../errors/RuntimeError.js';
import { logStep, redactSecrets } from '../middleware/middlewares.js';
import type { StepContext } from '../middleware/defineMiddleware.js';
import type { Runtime } from '../runtime/Runtime.js';
import { answerApproval, resolveApproval } from '../steps/toolStep.js';
import { lazyHandler, type StepHandler } from './stepHandler.js';

/** A direct approvals command (CLI / console / API Gateway integration). */
export const ApprovalCommand = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('list'), status: z.enum(['PENDING', 'APPROVED', 'REJECTED', 'TIMED_OUT']).optional() }),
  z.strictObject({ action: z.literal('approve'), approvalId: z.string().min(1), by: z.string().optional(), reason: z.string().optional() }),
  z.strictObject({ action: z.literal('reject'), approvalId: z.string().min(1), by: z.string().optional(), reason: z.string().optional() }),
  z.strictObject({ action: z.literal('expire') }),
]);

/**
 * Approvals: `list`, `approve` (runs the gated call and answers its task token), `reject`,
 * and `expire` (also on any scheduled EventBridge event): PENDING approvals past their deadline
 * become TIMED_OUT and their task tokens fail with `ApprovalRejected` — a timeout is a denial.
 * SQS records (the approval queue) are acknowledged and logged: the record was written before the message.
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
      return { approvals: (await rt.approvals.list(cmd.status ?? 'PENDING')).map(({ taskToken: _t, ...a }) => a) };
    case 'approve':
      return resolveApproval(rt, cmd.approvalId, 'APPROVED', cmd.by, cmd.reason);
    case 'reject':
      return resolveApproval(rt, cmd.approvalId, 'REJECTED', cmd.by, cmd.reason);
    case 'expire':
      return { expired: await expireDueApprovals(rt) };
  }
}

/**
 * Denies every PENDING approval past its deadline: TIMED_OUT, its task token failed with
 * `ApprovalRejected`, a run event. On AWS an EventBridge schedule calls it; the embedded stack's
 * owner calls it on a timer. Returns the ids it expired.
 */
export async function expireDueApprovals(rt: Runtime): Promise<string[]> {
  const expired = await rt.approvals.expireDue();
  for (const a of expired) {
    // A token nothing waits on now is answered when its execution resumes and asks again.
    await answerApproval(rt, a).catch(() => undefined);
    await rt.runs.recordEvent({ runId: a.runId, stepId: a.stepId, type: 'ApprovalTimedOut', detail: { approvalId: a.approvalId } });
  }
  // Each scheduled expiry also says how many calls wait for a person (a gauge for the dashboard):
  // on Lambda only, where the metric is read, as it costs a query.
  if (rt.telemetry.enabled) rt.telemetry.addMetric('ApprovalsWaiting', (await rt.approvals.list('PENDING', 1000)).length);
  return expired.map((a) => a.approvalId);
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
