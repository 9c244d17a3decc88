// A StartExecution whose answer was lost is retried (the SDK retries a timeout); when the
// execution it started has ended meanwhile, Step Functions answers the retry with
// ExecutionAlreadyExists. The execution is named after the run, so one there with the run's input
// is the run's own: the run settles from it instead of being failed with the retry's error.
import { describe, expect, it } from 'vitest';
import { RunService } from '../src/runs/RunService.js';
import type { Executions } from '../src/runs/ports.js';
import { WF_ENTRY as ENTRY, fileRuntime, wfCatalog as catalog } from './runServiceFixture.js';

const alreadyExists = (arn: string) =>
  Object.assign(new Error(`Execution Already Exists: '${arn}'`), {
    name: 'ExecutionAlreadyExists',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
  });

/**
 * Executions where every start runs its execution to its end at once, then answers as a retried
 * StartExecution would: ExecutionAlreadyExists. `inputOf` gives the input an execution already
 * there was started with instead (another execution under the name).
 */
function retriedStarts(inputOf?: (input: string) => string): Executions & { started: Map<string, string> } {
  const started = new Map<string, string>();
  return {
    started,
    async start(req) {
      const arn = `${req.stateMachineArn.replace(':stateMachine:', ':execution:')}:${req.name}`;
      started.set(arn, inputOf ? inputOf(req.input) : req.input);
      throw alreadyExists(arn);
    },
    async describe(arn) {
      const input = started.get(arn);
      return input === undefined
        ? undefined
        : ({ status: 'SUCCEEDED', executionArn: arn, input, output: '{"ok":true}', stopDate: new Date(), $metadata: {} } as never);
    },
    async stop() {},
    async history() {
      return [];
    },
  };
}

const runtime = fileRuntime();

describe('Class: RunService (a StartExecution retried after its execution ended)', () => {
  it("keeps the run and settles it from its execution, when the one there has the run's input", async () => {
    const service = new RunService({ runtime: runtime(), executions: retriedStarts(), catalog });
    const { run, reused } = await service.start(ENTRY, { n: 1 }, { runId: 'r-retried' });
    expect([run.runId, run.status, reused]).toEqual(['r-retried', 'RUNNING', false]);
    const done = await service.wait('r-retried');
    expect([done.status, done.output]).toEqual(['SUCCEEDED', { ok: true }]);
  });

  it('fails the run with ExecutionAlreadyExists when the execution there was started with another input', async () => {
    const service = new RunService({
      runtime: runtime(),
      executions: retriedStarts((input) => `${input.slice(0, -1)},"other":true}`),
      catalog,
    });
    const error = (await service.start(ENTRY, { n: 2 }, { runId: 'r-other' }).catch((e: unknown) => e)) as Error;
    expect(error.name).toBe('ExecutionAlreadyExists');
    const failed = await service.getRun('r-other');
    expect([failed.status, failed.error?.name]).toEqual(['FAILED', 'ExecutionAlreadyExists']);
  });
});
