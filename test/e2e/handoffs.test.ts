// Kortyx transitionTo: a node hands the run over to another workflow of its module, which starts as
// a nested Step Functions execution (startExecution.sync:2) of that workflow's own state machine
// when the handing workflow ends, with the run state and the node's data merged over it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { DescribeExecutionCommand, ListExecutionsCommand } from '@aws-sdk/client-sfn';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { cliIn, tempProject } from './support/testIo.js';

const FIXTURE = join(__dirname, 'fixtures', 'handoffs.ts');
const arnOf = (name: string) => `arn:aws:states:us-east-1:123456789012:stateMachine:${name}`;

describe('Kortyx transitionTo (run FILE.ts, embedded)', () => {
  const project = tempProject('sf-handoff-');
  const cli = cliIn(project.dir);
  let stack: EmbeddedStack;
  beforeAll(async () => {
    stack = await openStack({ projectDir: project.dir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
  });
  afterAll(async () => {
    await stack.close();
    project.remove();
  });

  async function run(input: unknown) {
    const r = await cli('run', FIXTURE, '--export', 'frontDesk', '--input', JSON.stringify(input), '--json');
    const started = JSON.parse(r.out) as { runId: string; status: string; output: unknown };
    const shown = JSON.parse((await cli('runs', 'show', started.runId, '--json')).out) as {
      run: { error?: { name: string; message: string } };
    };
    return { code: r.code, ...started, error: shown.run.error };
  }
  const billingRuns = async () => (await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: arnOf('billing-desk') }))).executions!;

  it('runs the workflow to its end, then the named workflow as a nested execution given the run state and the payload; its output is the result', async () => {
    const r = await run({ topic: 'billing' });
    expect(r.status).toBe('SUCCEEDED');
    // The front desk's last node ran before the hand-off, as Kortyx lets the graph finish first.
    expect(r.output).toEqual({
      topic: 'billing',
      reason: 'a billing question',
      noted: true,
      reply: 'billing handles a billing question',
      sawNote: true,
    });
    const started = await billingRuns();
    expect(started).toHaveLength(1);
    const nested = await stack.sfn.send(new DescribeExecutionCommand({ executionArn: started[0]!.executionArn }));
    expect(nested.status).toBe('SUCCEEDED');
    expect(JSON.parse(nested.input!)).toEqual({ topic: 'billing', reason: 'a billing question', noted: true });
  });

  it("hands over to the last workflow a node named, with that node's payload", async () => {
    const r = await run({ topic: 'twice' });
    expect(r.status).toBe('SUCCEEDED');
    expect(r.output).toMatchObject({ reason: 'second', reply: 'billing handles second' });
    expect(await billingRuns()).toHaveLength(2);
  });

  it('ends as a plain run when no node hands over: nothing else starts', async () => {
    const r = await run({ topic: 'password' });
    expect(r.status).toBe('SUCCEEDED');
    expect(r.output).toEqual({ topic: 'password', answered: true, noted: true });
    expect(await billingRuns()).toHaveLength(2);
  });

  it('fails with HandoffTargetUnknown naming the node, the id and the workflows it may hand over to', async () => {
    const r = await run({ topic: 'lost' });
    expect(r.status).toBe('FAILED');
    expect(r.error).toEqual({
      name: 'HandoffTargetUnknown',
      message:
        "step 'front-desk.classify' failed: node 'classify' returned transitionTo \"lost-and-found\", which is no other Kortyx workflow the module exports (billing-desk): export the workflow with that id from the same module",
    });
  });

  it('refuses a hand-off to the workflow itself (HandoffTargetUnknown): a nested execution of itself would not end', async () => {
    const r = await run({ topic: 'loop' });
    expect(r.status).toBe('FAILED');
    expect(r.error).toEqual({
      name: 'HandoffTargetUnknown',
      message:
        "step 'front-desk.classify' failed: node 'classify' returned transitionTo \"front-desk\", which is this workflow itself: route back to a node with an edge instead",
    });
  });
});
