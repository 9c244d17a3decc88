// Approvals, decided in one place: the CLI, `stepforge serve`, the HTTP API on AWS and the approvals
// Lambda all decide, list and expire them through these functions, so the rules (an approval is
// decided once; a run that has ended takes no decision; a timeout is a denial) live here only.
import { StepforgeError, type StepEnvelope } from '@stepforge/contract';
import { isRuntimeError } from '../errors/RuntimeError.js';
import type { ApprovalRecord } from '../persistence/ApprovalStore.js';
import type { Runtime } from '../runtime/Runtime.js';
import { approvalAnswerer } from '../steps/approvalAnswerer.js';

/** A decision on an approval. */
export type ApprovalDecision = 'APPROVED' | 'REJECTED';

/** How a run ended (undefined while it runs, or when it is unknown): the caller's view of runs. */
export type EndedStatusOf = (runId: string) => Promise<string | undefined>;

/** Why a decision on a pending approval is refused once its run has ended (the `run_ended` error). */
export function runEndedMessage(runId: string, status: string, approvalId: string): string {
  return `run '${runId}' has ended (${status}), so nothing waits for approval '${approvalId}'; the call was not made`;
}

function approvalDecided(approvalId: string, status: string): StepforgeError {
  return new StepforgeError('approval_decided', `approval '${approvalId}' was already decided: ${status}`);
}

/**
 * Decides a pending approval. Refused: an unknown id (`unknown_approval`), one decided already
 * (`approval_decided`, also when another decider wins the conditional update meanwhile), one
 * whose run has ended (`run_ended`: nothing waits on the token, and the decision would be
 * recorded for a call never made). An approval runs the gated tool call and returns its result
 * through the task token; a rejection fails the waiting step with `ApprovalRejected`.
 * `delivered` is false when no execution waits on the token now: the run takes the decision when
 * its execution resumes. The record is answered as decided, not read again: a decision that ends
 * the run may end the embedded process holding the stack, and the table with it.
 */
export async function decideApproval(
  rt: Runtime,
  approvalId: string,
  decision: ApprovalDecision,
  p: { readonly by?: string; readonly comment?: string; readonly endedStatusOf: EndedStatusOf },
): Promise<{ approval: ApprovalRecord; delivered: boolean; result?: unknown }> {
  const existing = await rt.approvals.get(approvalId);
  if (!existing)
    throw new StepforgeError('unknown_approval', `no approval with id '${approvalId}'`, {
      hint: "'stepforge approvals list' shows the pending ones",
    });
  if (existing.status !== 'PENDING') throw approvalDecided(approvalId, existing.status);
  const ended = await p.endedStatusOf(existing.runId).catch(() => undefined);
  if (ended !== undefined) {
    throw new StepforgeError('run_ended', runEndedMessage(existing.runId, ended, approvalId), {
      hint: `'stepforge runs show ${existing.runId}' shows what happened; 'stepforge runs retry ${existing.runId}' runs its unfinished steps again`,
    });
  }
  try {
    const { record, ...answered } = await recordDecision(rt, approvalId, decision, p.by, p.comment);
    return { approval: record, ...answered };
  } catch (e) {
    // Another decision won the conditional update since the read above (two deciders at once).
    const status = (e as { details?: { status?: string } }).details?.status;
    if (isRuntimeError(e) && e.name === 'PolicyDenied' && status !== undefined && status !== 'PENDING')
      throw approvalDecided(approvalId, status);
    throw e;
  }
}

/** The decision recorded (one conditional update), its run event, and the task token answered. */
async function recordDecision(
  rt: Runtime,
  approvalId: string,
  decision: ApprovalDecision | 'TIMED_OUT',
  by?: string,
  reason?: string,
): Promise<{ record: ApprovalRecord; result?: unknown; delivered: boolean }> {
  const rec = await rt.approvals.decide(approvalId, {
    decision,
    ...(by !== undefined ? { by } : {}),
    ...(reason !== undefined ? { reason } : {}),
  });
  await rt.runs.recordEvent({
    runId: rec.runId,
    stepId: rec.stepId,
    type: `Approval${rec.status === 'APPROVED' ? 'Granted' : rec.status === 'REJECTED' ? 'Rejected' : 'TimedOut'}`,
    detail: { approvalId, by, reason },
  });
  const text = rec.status === 'APPROVED' ? await rt.approvals.envelopeOf(approvalId) : undefined;
  const answered = await approvalAnswerer()(rt, rec, text !== undefined ? (JSON.parse(text) as StepEnvelope) : undefined);
  return { record: rec, ...(answered.result !== undefined ? { result: answered.result } : {}), delivered: answered.delivered };
}

/**
 * Approvals with `status`. A pending approval of a run that has ended (cancelled, timed out,
 * failed in another branch) waits for nobody, so it is not listed; `endedStatusOf` is asked once
 * per run.
 */
export async function listApprovals(
  rt: Runtime,
  status: ApprovalRecord['status'],
  endedStatusOf: EndedStatusOf,
): Promise<ApprovalRecord[]> {
  const list = await rt.approvals.list(status);
  if (status !== 'PENDING') return list;
  const ended = new Map<string, Promise<string | undefined>>();
  const endedOf = (runId: string) => {
    let e = ended.get(runId);
    if (!e) ended.set(runId, (e = endedStatusOf(runId).catch(() => undefined)));
    return e;
  };
  const open = await Promise.all(list.map(async (a) => (await endedOf(a.runId)) === undefined));
  return list.filter((_, i) => open[i]);
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
    await approvalAnswerer()(rt, a).catch(() => undefined);
    await rt.runs.recordEvent({ runId: a.runId, stepId: a.stepId, type: 'ApprovalTimedOut', detail: { approvalId: a.approvalId } });
  }
  // Each scheduled expiry also says how many calls wait for a person (a gauge for the dashboard):
  // on Lambda only, where the metric is read, as it costs a query.
  if (rt.telemetry.enabled) rt.telemetry.addMetric('ApprovalsWaiting', (await rt.approvals.list('PENDING', 1000)).length);
  return expired.map((a) => a.approvalId);
}

/** An approval as answered to a person or a client: without its task token. */
export function publicApproval<A extends { readonly taskToken?: string }>({ taskToken: _t, ...rest }: A): Omit<A, 'taskToken'> {
  return rest;
}
