/**
 * Pending approvals without those whose run has ended (cancelled, timed out, failed in another
 * branch): nothing waits for them any more. `endedStatusOf` says how a run ended (undefined while
 * it runs, or when it is unknown); it is asked once per run. `stepforge serve` / the CLI and the
 * AWS API list approvals through this, each with its own way of knowing a run's status.
 */
export async function approvalsOfOpenRuns<A extends { readonly runId?: string }>(
  approvals: readonly A[],
  endedStatusOf: (runId: string) => Promise<string | undefined>,
): Promise<A[]> {
  const ended = new Map<string, Promise<string | undefined>>();
  const endedOf = (runId: string) => {
    let e = ended.get(runId);
    if (!e) ended.set(runId, (e = endedStatusOf(runId)));
    return e;
  };
  const open = await Promise.all(approvals.map(async (a) => a.runId === undefined || (await endedOf(a.runId)) === undefined));
  return approvals.filter((_, i) => open[i]);
}

/** Why a decision on a pending approval is refused once its run has ended (the `run_ended` error). */
export function runEndedMessage(runId: string, status: string, approvalId: string): string {
  return `run '${runId}' has ended (${status}), so nothing waits for approval '${approvalId}'; the call was not made`;
}
