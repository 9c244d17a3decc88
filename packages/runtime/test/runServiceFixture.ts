// What the RunService tests that drive starts by hand share: one workflow, a catalog that answers
// with it, and a runtime over dynalite on loopback for the whole file.
import { afterAll, beforeAll } from 'vitest';
import type { Runtime } from '../src/runtime/Runtime.js';
import type { WorkflowCatalog, WorkflowEntry } from '../src/runs/ports.js';
import { makeRuntime, startDynalite, type DynamoEndpoint } from './emulators.js';

/** The one workflow (`wf`), with no steps of its own to record. */
export const WF_ENTRY: WorkflowEntry = {
  name: 'wf',
  stateMachineArn: 'arn:aws:states:us-east-1:123456789012:stateMachine:wf',
  inputSchema: { fields: [] },
  steps: [],
  edges: [],
  updatedAt: '2026-12-06T00:00:00.000Z',
};

/** A catalog that has WF_ENTRY alone. */
export const wfCatalog: WorkflowCatalog = { get: async () => WF_ENTRY, forRun: async () => WF_ENTRY, list: async () => [WF_ENTRY] };

/** A runtime over a dynalite of its own, started before the file's tests and closed after them; read it inside a test. */
export function fileRuntime(): () => Runtime {
  let ddb: DynamoEndpoint;
  let rt: Runtime;
  beforeAll(async () => {
    ddb = await startDynalite();
    rt = await makeRuntime(ddb.endpoint);
  });
  afterAll(async () => {
    await rt.close();
    await ddb.stop();
  });
  return () => rt;
}
