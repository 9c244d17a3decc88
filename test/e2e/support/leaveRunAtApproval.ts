import { openStack } from '../../../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../../../packages/embedded/src/RunService.js';

/**
 * What an interrupted `stepforge run` of examples/approval-gate.chain.yaml leaves on the project's
 * on-disk stack: a process opens the stack, starts the run, waits until its gated call has a
 * PENDING approval, and ends (closes the stack) with the run still waiting. The project must hold
 * a copy of examples/. Returns the run id and its approval id ('' if none appeared within 10 s).
 */
export async function leaveRunAtApproval(
  projectDir: string,
  version: string,
  options: { idempotencyKey?: string } = {},
): Promise<{ runId: string; approvalId: string }> {
  const stack = await openStack({ projectDir, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
  try {
    const service = new EmbeddedRunService(stack, projectDir);
    const { entry } = await service.catalog.registerFile('examples/approval-gate.chain.yaml');
    const runId = (
      await service.start(entry, { version }, options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {})
    ).run.runId;
    let approvalId = '';
    for (let i = 0; i < 400 && !approvalId; i++) {
      approvalId = (await service.listApprovals('PENDING')).find((a) => a.runId === runId)?.approvalId ?? '';
      if (!approvalId) await new Promise((r) => setTimeout(r, 25));
    }
    return { runId, approvalId };
  } finally {
    await stack.close();
  }
}
