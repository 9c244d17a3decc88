// The function handler running a node of a workflow written in code: it imports the user's module,
// takes the exported workflow and calls the node by name.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFunctionHandler } from '../src/handlers/function.js';
import type { Runtime } from '../src/runtime/Runtime.js';
import { envelope } from './envelope.js';
import { makeRuntime, startDynalite, type DynamoEndpoint } from './emulators.js';

let ddb: DynamoEndpoint;
let rt: Runtime;
let dir: string;

beforeAll(async () => {
  ddb = await startDynalite();
  dir = mkdtempSync(join(tmpdir(), 'sf-code-'));
  writeFileSync(
    join(dir, 'flow.mjs'),
    `export const flow = { nodes: {
  classify: { run: ({ input, params }) => ({ intent: 'support.answer', data: { seen: input.message, tone: params.tone } }) },
  explode: { run: () => { throw new RangeError('quota gone'); } },
} };\n`,
  );
  writeFileSync(join(dir, 'broken.mjs'), 'throw new Error("no database configured");\n');
  rt = await makeRuntime(ddb.endpoint, { userFunctionsDir: dir });
});
afterAll(async () => {
  await rt.close();
  await ddb.stop();
});

const node = (module: string, codeNode: string, value: unknown = {}) =>
  envelope({
    kind: 'function',
    step: `support.${codeNode}`,
    config: { codeModule: join(dir, module), codeExport: 'flow', codeNode, params: { tone: 'warm' } },
    inputs: { value },
  });

describe('Function: runCodeNodeStep', () => {
  it('calls the named node with the run state as input and its params', async () => {
    const r = (await createFunctionHandler(rt)(node('flow.mjs', 'classify', { message: 'hi' }))) as { output: unknown };
    expect(r.output).toEqual({ intent: 'support.answer', data: { seen: 'hi', tone: 'warm' } });
  });

  it('names the node when it throws (NodeError)', async () => {
    const err = (await createFunctionHandler(rt)(node('flow.mjs', 'explode')).catch((e: unknown) => e)) as Error;
    expect(err.name).toBe('NodeError');
    expect(err.message).toBe("node 'explode' threw RangeError: quota gone");
  });

  it('names the node when its module cannot be loaded (CodeModuleLoadError)', async () => {
    const err = (await createFunctionHandler(rt)(node('broken.mjs', 'classify')).catch((e: unknown) => e)) as Error;
    expect(err.name).toBe('CodeModuleLoadError');
    expect(err.message).toContain(`node 'classify': the module ${join(dir, 'broken.mjs')} could not be loaded: no database configured`);
  });

  it('names the node when the module no longer has it (CodeModuleLoadError)', async () => {
    const err = (await createFunctionHandler(rt)(node('flow.mjs', 'gone')).catch((e: unknown) => e)) as Error;
    expect(err.name).toBe('CodeModuleLoadError');
    expect(err.message).toContain("node 'gone': the module");
  });
});
