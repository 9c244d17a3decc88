import type { DescribeExecutionCommandOutput, HistoryEvent, SFNClient } from '@aws-sdk/client-sfn';
import { asSdkOutput } from '@stepforge/engine';
import { sfnExecutions, type ExecutionEnd, type Executions } from '@stepforge/runtime';
import { asSdkCall } from './asSdkCall.js';
import type { EmbeddedStack } from './EmbeddedStack.js';

/**
 * The embedded stack's Executions: the Step Functions API on loopback (sfnExecutions, as on AWS),
 * and, in the process that owns the engine, the same operations called on its ExecutionManager,
 * the code the API server runs for them, without the HTTP round trip and the SDK pipeline: a
 * `run` then sends none of its own requests to its engine, and loads neither the Step Functions
 * client nor an HTTP client for it. Answers are shaped as the SDK returns them (dates as `Date`s,
 * a copy of the engine's records), and waiting for an execution resolves when it ends instead of
 * polling DescribeExecution. The engine's API errors keep their names (`ExecutionAlreadyExists`,
 * `ExecutionDoesNotExist`), as the SDK's would.
 */
export function engineExecutions(stack: EmbeddedStack): Executions {
  // The stack's client is read when a request goes (the owner builds it on first use).
  const api = sfnExecutions({ send: ((command: never, options?: never) => stack.sfn.send(command, options)) as SFNClient['send'] });
  const engine = stack.engine;
  if (!engine) return api;
  const { manager } = engine;
  return {
    async start(req) {
      await asSdkCall(() => manager.startExecution({ ...req }));
    },
    async describe(executionArn) {
      try {
        return {
          $metadata: {},
          ...(asSdkOutput(asSdkCall(() => manager.describeExecution({ executionArn }))) as object),
        } as DescribeExecutionCommandOutput;
      } catch (e) {
        if ((e as { name?: string }).name === 'ExecutionDoesNotExist') return undefined;
        throw e;
      }
    },
    async stop(executionArn, error, cause) {
      await asSdkCall(() => manager.stopExecution({ executionArn, error, cause }));
    },
    async history(executionArn) {
      // Every page, as the API client reads them (the pages are the engine's; one call could ask for all).
      const out: HistoryEvent[] = [];
      let nextToken: string | undefined;
      do {
        const page = asSdkCall(() =>
          manager.getExecutionHistory({ executionArn, maxResults: 1000, ...(nextToken ? { nextToken } : {}) }),
        ) as {
          events: unknown[];
          nextToken?: string;
        };
        for (const event of page.events) out.push(asSdkOutput(event) as HistoryEvent);
        nextToken = page.nextToken;
      } while (nextToken);
      return out;
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
