import middy from '@middy/core';
import { logStep, redactSecrets } from '../middleware/middlewares.js';
import type { StepContext } from '../middleware/defineMiddleware.js';
import type { Runtime } from '../runtime/Runtime.js';
import { deployedRunService } from '../runs/deployedRunService.js';
import { shownExecutionArn } from '../runs/runExecutionArn.js';
import { lazyHandler } from './lazyHandler.js';
import type { StepHandler } from './stepHandler.js';

/** A run a trigger started (or found under its idempotency key: `reused`). */
export interface TriggeredRun {
  readonly runId: string;
  readonly executionArn?: string;
  readonly status: string;
  readonly reused: boolean;
}

/** An SQS batch (EventBridge rule → SQS → this handler). */
export interface TriggerEvent {
  Records?: { messageId: string; body: string }[];
}

/**
 * Starts one run per SQS record. The body is an EventBridge event whose `detail` is
 * `{workflow, input?, idempotencyKey?}`, or that object directly. The idempotency key defaults
 * to the EventBridge event id (else the SQS message id), so a redelivered message never starts
 * a second run. The run service checks the input against the workflow's schema, as for any start.
 * Failed records are reported as `batchItemFailures` for SQS to redeliver.
 */
export async function handleTrigger(
  rt: Runtime,
  event: TriggerEvent,
): Promise<{ batchItemFailures: { itemIdentifier: string }[]; started: TriggeredRun[] }> {
  const failures: { itemIdentifier: string }[] = [];
  const started: TriggeredRun[] = [];
  const service = deployedRunService(rt);
  for (const rec of event.Records ?? []) {
    try {
      const body = JSON.parse(rec.body) as Record<string, unknown>;
      const isEventBridge = typeof body['detail-type'] === 'string' && typeof body.detail === 'object';
      const spec = (isEventBridge ? body.detail : body) as { workflow?: unknown; input?: unknown; idempotencyKey?: unknown };
      if (typeof spec.workflow !== 'string') throw new Error('trigger message has no "workflow"');
      const key =
        typeof spec.idempotencyKey === 'string'
          ? spec.idempotencyKey
          : `trigger:${isEventBridge && typeof body.id === 'string' ? body.id : rec.messageId}`;
      const run = await service.start(await service.workflow(spec.workflow), spec.input ?? {}, { idempotencyKey: key });
      started.push({
        runId: run.run.runId,
        ...(run.run.executionArn !== undefined ? { executionArn: shownExecutionArn(run.run) } : {}),
        status: run.run.status,
        reused: run.reused,
      });
    } catch (e) {
      rt.logger.error('trigger record failed', {
        messageId: rec.messageId,
        errorName: (e as Error).name,
        errorMessage: (e as Error).message,
      });
      failures.push({ itemIdentifier: rec.messageId });
    }
  }
  return { batchItemFailures: failures, started };
}

/** The trigger handler (SQS event source). */
export function createTriggerHandler(rt: Runtime): StepHandler {
  const h = middy<unknown, unknown, Error, StepContext>(async (event: unknown) => handleTrigger(rt, event as TriggerEvent))
    .use(logStep({ runtime: rt, handler: 'trigger' }))
    .use(redactSecrets({ runtime: rt }));
  return (event, context) => h(event, { ...((context as object | undefined) ?? {}) } as StepContext);
}

/** Lambda entry point. */
export const handler = lazyHandler(createTriggerHandler);
