import type { HistoryEvent, SFNClient } from '@aws-sdk/client-sfn';
import { sfnSdk } from '../runtime/sfnClient.js';
import type { ExecutionDescription, Executions } from './ports.js';

/**
 * Executions over a Step Functions client: AWS, and the embedded engine's Step Functions API on
 * loopback alike (both answer the same SDK with the same error names).
 */
export function sfnExecutions(sfn: Pick<SFNClient, 'send'>): Executions {
  return {
    async start(req) {
      await sfn.send(new (await sfnSdk()).StartExecutionCommand({ ...req }));
    },
    async describe(executionArn): Promise<ExecutionDescription | undefined> {
      try {
        return await sfn.send(new (await sfnSdk()).DescribeExecutionCommand({ executionArn }));
      } catch (e) {
        if ((e as { name?: string }).name === 'ExecutionDoesNotExist') return undefined;
        throw e;
      }
    },
    async stop(executionArn, error, cause) {
      await sfn.send(new (await sfnSdk()).StopExecutionCommand({ executionArn, error, cause }));
    },
    async history(executionArn): Promise<HistoryEvent[]> {
      const out: HistoryEvent[] = [];
      let nextToken: string | undefined;
      const { GetExecutionHistoryCommand } = await sfnSdk();
      do {
        const r = await sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, ...(nextToken ? { nextToken } : {}) }));
        out.push(...(r.events ?? []));
        nextToken = r.nextToken;
      } while (nextToken);
      return out;
    },
  };
}
