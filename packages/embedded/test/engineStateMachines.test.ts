// The owner registers workflows with its engine in process (engineStateMachines): no HTTP request,
// the engine's answers and error names as the Step Functions API gives them, and a definition it
// holds already (the same workflow registered by each `run`) not checked again.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStack, type EmbeddedStack } from '../src/EmbeddedStack.js';
import { embeddedStateMachineArn, engineStateMachines } from '../src/engineStateMachines.js';

const ROLE = 'arn:aws:iam::123456789012:role/StepforgeEmbedded';
const pass = (result: string) => JSON.stringify({ StartAt: 'A', States: { A: { Type: 'Pass', Result: result, End: true } } });

let dir: string;
let stack: EmbeddedStack;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sf-machines-'));
  stack = await openStack({ projectDir: dir, inMemory: true, env: { STEPFORGE_LOG_LEVEL: 'SILENT' } });
});
afterAll(async () => {
  await stack.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Function: engineStateMachines (owner of the engine)', () => {
  it("creates in the engine's process, and finds an identical definition there without the engine checking it again", async () => {
    const machines = engineStateMachines(stack);
    const create = vi.spyOn(stack.engine!.manager, 'createStateMachine');
    const send = vi.spyOn(stack.sfn, 'send');
    try {
      const input = { name: 'same-again', definition: pass('one'), roleArn: ROLE, type: 'STANDARD' as const };
      expect(await machines.create(input)).toMatchObject({ stateMachineArn: embeddedStateMachineArn('same-again') });
      expect(create).toHaveBeenCalledTimes(1);
      expect(await machines.create(input)).toEqual({ stateMachineArn: embeddedStateMachineArn('same-again') });
      expect(create).toHaveBeenCalledTimes(1);
      expect((await machines.describe({ stateMachineArn: embeddedStateMachineArn('same-again') })).definition).toBe(pass('one'));
      expect(send).not.toHaveBeenCalled();
    } finally {
      create.mockRestore();
      send.mockRestore();
    }
  });

  it('throws the API error names the SDK would: another definition under the name, an invalid one', async () => {
    const machines = engineStateMachines(stack);
    await machines.create({ name: 'changes', definition: pass('one'), roleArn: ROLE, type: 'STANDARD' });
    const exists = (await machines
      .create({ name: 'changes', definition: pass('two'), roleArn: ROLE, type: 'STANDARD' })
      .catch((e) => e)) as {
      name: string;
      $fault: string;
      $metadata: { httpStatusCode: number };
    };
    expect([exists.name, exists.$fault, exists.$metadata.httpStatusCode]).toEqual(['StateMachineAlreadyExists', 'client', 400]);
    await machines.update({ stateMachineArn: embeddedStateMachineArn('changes'), definition: pass('two') });
    expect((await machines.describe({ stateMachineArn: embeddedStateMachineArn('changes') })).definition).toBe(pass('two'));
    const invalid = (await machines
      .create({ name: 'bad', definition: '{"StartAt":"Nowhere","States":{}}', roleArn: ROLE, type: 'STANDARD' })
      .catch((e) => e)) as Error;
    expect(invalid.name).toBe('InvalidDefinition');
    expect(invalid.message).toMatch(/^Invalid State Machine Definition: /);
  });
});
