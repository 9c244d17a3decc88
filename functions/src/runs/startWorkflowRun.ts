import { DescribeExecutionCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { RUN_META_KEY, executionInputSizeError, idempotencyKeyError } from '@stepforge/contract';
import { RuntimeError } from '../errors/RuntimeError.js';
import { idempotencyKeyConflict } from './idempotencyKeyConflict.js';
import { inputDiffers } from './inputDiffers.js';
import { crashPoint, failedBeforeStart, runStarter, startRefused } from './orphanedStart.js';
import type { Runtime } from '../runtime/Runtime.js';

/** What starting a workflow answers (`run --json` shape plus the execution ARN). */
export interface StartedRun {
  readonly runId: string;
  readonly executionArn?: string;
  readonly status: string;
  /** True when the idempotency key matched an earlier run, which is returned instead. */
  readonly reused: boolean;
  /** Present (true) when that earlier run was started with another input than this start's. */
  readonly inputDiffers?: true;
}

/** The state machine ARN for a workflow name (explicit map first, then the ARN prefix). */
export function stateMachineArn(rt: Runtime, workflow: string): string {
  if (workflow.startsWith('arn:')) return workflow;
  const mapped = rt.config.stateMachines[workflow];
  if (mapped) return mapped;
  if (rt.config.stateMachineArnPrefix) return `${rt.config.stateMachineArnPrefix}${workflow}`;
  throw new RuntimeError('NotFound', `no state machine known for workflow "${workflow}" (set STEPFORGE_STATE_MACHINES or STEPFORGE_STATE_MACHINE_ARN_PREFIX)`);
}

/**
 * Starts a run: the run record first (same idempotency key → same run, returned with
 * `reused: true`), then a Step Functions execution named after the run id, so a retried start can
 * never create a second execution either.
 */
export async function startWorkflowRun(rt: Runtime, p: { workflow: string; input?: unknown; idempotencyKey?: string; parentRunId?: string }): Promise<StartedRun> {
  const arn = stateMachineArn(rt, p.workflow);
  const workflow = p.workflow.startsWith('arn:') ? p.workflow.split(':').pop() as string : p.workflow;
  const input = {
    ...(p.input !== null && typeof p.input === 'object' && !Array.isArray(p.input) ? p.input as Record<string, unknown> : { value: p.input ?? null }),
    [RUN_META_KEY]: { idempotencyKey: p.idempotencyKey ?? null, parentRunId: p.parentRunId ?? null },
  };
  const keyError = p.idempotencyKey !== undefined ? idempotencyKeyError(p.idempotencyKey) : undefined;
  if (keyError !== undefined) throw new RuntimeError('InvalidInput', keyError);
  const executionInput = JSON.stringify(input);
  // Refused before the run is recorded: StartExecution would refuse it after, leaving a FAILED run.
  const tooLarge = executionInputSizeError(executionInput);
  if (tooLarge !== undefined) throw new RuntimeError('InvalidInput', tooLarge);
  const { run, reused } = await rt.runs.startRun({ workflow, idempotencyKey: p.idempotencyKey, parentRunId: p.parentRunId, input: p.input });
  // A key names one run: answering with a run of another workflow would answer the wrong question.
  const conflict = reused ? idempotencyKeyConflict(p.idempotencyKey, run, workflow) : undefined;
  if (conflict !== undefined) throw new RuntimeError('IdempotencyKeyConflict', conflict, { details: { runId: run.runId, workflow: run.workflow } });
  if (reused) {
    const differs = inputDiffers(rt.redactor, p.input, run.input);
    const replay = (status: string) => ({ runId: run.runId, ...(run.executionArn ? { executionArn: run.executionArn } : {}), status, reused: true, ...(differs ? { inputDiffers: true as const } : {}) });
    const d = run.executionArn
      ? await rt.sfn().send(new DescribeExecutionCommand({ executionArn: run.executionArn })).catch((e: unknown) => {
        if ((e as { name?: string }).name === 'ExecutionDoesNotExist') return undefined;
        throw e;
      })
      : undefined;
    if (d) return replay(d.status ?? run.status);
    // An interrupted start (orphanedStart.ts): the run is recorded but its execution was never
    // started, or it was failed for that since. This start has the input, so it completes that
    // start (the execution is named after the run, so a start racing this one cannot make a
    // second); with another input it cannot, and the run is answered as it is.
    const failed = failedBeforeStart(run);
    if (differs || (run.status !== 'RUNNING' && !failed)) return replay(run.status);
    if (failed && (await rt.runs.takeOverStart(run, { to: 'start', starter: runStarter() })) === undefined) return replay(run.status);
  }
  crashPoint('after-run-record', `run ${run.runId}`);
  let executionArn: string | undefined;
  try {
    const r = await rt.sfn().send(new StartExecutionCommand({ stateMachineArn: arn, name: run.runId, input: executionInput }));
    executionArn = r.executionArn;
  } catch (e) {
    if ((e as { name?: string }).name !== 'ExecutionAlreadyExists') {
      if (startRefused(e)) await rt.runs.finishRun(run.runId, { status: 'FAILED', error: { name: (e as Error).name, message: (e as Error).message } });
      throw e;
    }
    executionArn = `${arn.replace(':stateMachine:', ':execution:')}:${run.runId}`;
  }
  await rt.runs.finishRun(run.runId, { status: 'RUNNING', ...(executionArn ? { executionArn } : {}) });
  return { runId: run.runId, executionArn, status: 'RUNNING', reused };
}
