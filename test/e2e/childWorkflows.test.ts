// Kortyx useWorkflow: a node runs a child workflow as a nested Step Functions execution
// (startExecution.sync:2) of the child's own state machine, its input and output checked against
// the child's zod schemas in the function handler.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { DescribeExecutionCommand, ListExecutionsCommand } from '@aws-sdk/client-sfn';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { cliIn, tempProject } from './support/testIo.js';

const repo = join(__dirname, '..', '..');
const REFUND = join(repo, 'examples', 'code', 'refund.ts');
const FIXTURE = join(repo, 'test', 'e2e', 'fixtures', 'childWorkflows.ts');
const arnOf = (name: string) => `arn:aws:states:us-east-1:123456789012:stateMachine:${name}`;

describe('Kortyx useWorkflow (run FILE.ts, embedded)', () => {
  const project = tempProject('sf-child-');
  const cli = cliIn(project.dir);
  let stack: EmbeddedStack;
  beforeAll(async () => {
    stack = await openStack({ projectDir: project.dir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
  });
  afterAll(async () => {
    await stack.close();
    project.remove();
  });

  async function run(file: string, exportName: string, input: unknown) {
    const r = await cli('run', file, '--export', exportName, '--input', JSON.stringify(input), '--json');
    const started = JSON.parse(r.out) as { runId: string; status: string; output: unknown };
    const shown = JSON.parse((await cli('runs', 'show', started.runId, '--json')).out) as {
      run: { error?: { name: string; message: string } };
    };
    return { code: r.code, ...started, error: shown.run.error };
  }

  it('runs the child as a nested execution of its own state machine, and its checked output reaches the parent', async () => {
    const r = await run(REFUND, 'refund', { order: { total: 80, ageDays: 45 } });
    expect(r.status).toBe('SUCCEEDED');
    expect(r.output).toEqual({ order: { total: 80, ageDays: 45 }, refund: 40, policy: 'half', reply: 'We refund 40 (half refund).' });
    const children = await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: arnOf('refund-quote') }));
    expect(children.executions).toHaveLength(1);
    const child = await stack.sfn.send(new DescribeExecutionCommand({ executionArn: children.executions![0]!.executionArn }));
    expect(child.status).toBe('SUCCEEDED');
    // The child got the input the node's function built from the run state, and answered its own run state.
    expect(JSON.parse(child.input!)).toEqual({ amount: 80, days: 45 });
    expect(JSON.parse(child.output!)).toEqual({ amount: 80, days: 45, refund: 40, policy: 'half' });
  });

  it('fails with WorkflowOutputInvalid naming the child and the zod issue when the child output breaks its outputSchema', async () => {
    const r = await run(FIXTURE, 'badOutput', { items: [1, 2] });
    expect(r.status).toBe('FAILED');
    expect(r.error).toEqual({
      name: 'WorkflowOutputInvalid',
      message:
        "step 'bad-output.total' failed: node 'total': the output of workflow 'broken-total' does not match its outputSchema at total: Invalid input: expected number, received string",
    });
    // The child itself succeeded: it is the caller's check that refuses its output.
    const children = await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: arnOf('broken-total') }));
    expect(children.executions!.map((e) => e.status)).toEqual(['SUCCEEDED']);
  });

  it('fails with WorkflowInputInvalid naming the child and the zod issue, before the child starts', async () => {
    const before = (await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: arnOf('broken-total') }))).executions!.length;
    const r = await run(FIXTURE, 'badInput', {});
    expect(r.status).toBe('FAILED');
    expect(r.error).toEqual({
      name: 'WorkflowInputInvalid',
      message:
        "step 'bad-input.total' failed: node 'total': the input of workflow 'broken-total' does not match its inputSchema at items.0: Invalid input: expected number, received string (and 1 more issue)",
    });
    expect((await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: arnOf('broken-total') }))).executions).toHaveLength(before);
  });

  async function retry(runId: string) {
    const r = await cli('runs', 'retry', runId, '--json');
    return JSON.parse(r.out) as { runId: string; status: string; output: unknown };
  }

  it("a retried parent reuses its child's result: the child, named by the committed input check, is not started again", async () => {
    const first = await run(FIXTURE, 'replyAfterChild', { items: [1, 2, 3] });
    expect(first.status).toBe('FAILED');
    expect(first.error?.message).toContain('the first reply fails');
    const before = (await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: arnOf('count-items') }))).executions!;
    expect(before.map((e) => e.status)).toEqual(['SUCCEEDED']);
    // Named after the node, so the console's list of the child's executions says who started it.
    expect(before[0]!.name).toMatch(/^count-[0-9a-f-]{36}$/);
    const again = await retry(first.runId);
    expect(again.status).toBe('SUCCEEDED');
    expect(again.output).toEqual({ items: [1, 2, 3], count: 3, reply: '3 items' });
    const after = (await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: arnOf('count-items') }))).executions!;
    expect(after.map((e) => e.name)).toEqual([before[0]!.name]);
  });

  it('a retried parent whose child failed starts the child again under the next name, and a further retry reuses that one', async () => {
    const first = await run(FIXTURE, 'callsFlakyChild', {});
    expect(first.status).toBe('FAILED');
    const failed = (await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: arnOf('flaky-child') }))).executions!;
    expect(failed.map((e) => e.status)).toEqual(['FAILED']);
    const again = await retry(first.runId);
    expect(again.status).toBe('SUCCEEDED');
    expect(again.output).toEqual({ worked: true });
    const both = (await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: arnOf('flaky-child') }))).executions!;
    expect(both.map((e) => [e.name, e.status]).sort()).toEqual([
      [failed[0]!.name, 'FAILED'],
      [`${failed[0]!.name}.2`, 'SUCCEEDED'],
    ]);
    // Retrying the retry (which succeeded) is a new run reusing everything: still two child executions.
    const third = await retry(again.runId);
    expect(third.status).toBe('SUCCEEDED');
    expect((await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: arnOf('flaky-child') }))).executions).toHaveLength(2);
  });
});
