import type { SFNClient } from '@aws-sdk/client-sfn';
import { isSfnApiError } from '@stepforge/engine';
import { sfnExecutions, type ExecutionEnd, type Executions } from '@stepforge/runtime';
import type { EmbeddedStack } from './EmbeddedStack.js';

/**
 * The embedded stack's Executions: the Step Functions API on loopback (sfnExecutions, as on AWS),
 * with two shortcuts in the process that owns the engine. StartExecution goes to the engine's
 * ExecutionManager, the code the API server runs for it, without the HTTP round trip and the SDK
 * pipeline (one of the 13 requests of a 5-step run); and waiting for an execution resolves when
 * it ends, instead of polling DescribeExecution. The engine's API errors keep their names
 * (`ExecutionAlreadyExists`, `ExecutionDoesNotExist`), as the SDK's would.
 */
export function engineExecutions(stack: EmbeddedStack): Executions {
  // The stack's client is read when a request goes (the owner builds it on first use).
  const api = sfnExecutions({ send: ((command: never, options?: never) => stack.sfn.send(command, options)) as SFNClient['send'] });
  const engine = stack.engine;
  if (!engine) return api;
  return {
    ...api,
    async start(req) {
      try {
        engine.manager.startExecution({ ...req });
      } catch (e) {
        // The engine refused the start itself: a client fault, as the SDK reports the API's 4xx
        // answers, so the run service fails the run for it (startRefused) as it would over HTTP.
        if (isSfnApiError(e))
          throw Object.assign(new Error(e.message), { name: e.type, $fault: 'client', $metadata: { httpStatusCode: 400 } });
        throw e;
      }
    },
    async waitFor(executionArn): Promise<ExecutionEnd | undefined> {
      try {
        return await engine.manager.waitForExecution(executionArn);
      } catch (e) {
        // The engine's own error (SfnApiError) carries the API error name as `type`.
        if ((e as { type?: string }).type === 'ExecutionDoesNotExist') return undefined;
        throw e;
      }
    },
  };
}
