import { describe, expect, it } from 'vitest';
import { deployedCatalog } from '../src/runs/deployedCatalog.js';
import type { Runtime } from '../src/runtime/Runtime.js';
import type { WorkflowEntry } from '../src/runs/ports.js';

const ARN = (n: string) => `arn:aws:states:eu-west-1:111122223333:stateMachine:${n}`;

/** A runtime with the deployment's state machine map and what its table holds of each workflow. */
function runtime(stored: Record<string, Partial<WorkflowEntry>>, prefix?: string): Runtime {
  return {
    config: { stateMachines: { triage: ARN('triage'), brief: ARN('brief') }, ...(prefix ? { stateMachineArnPrefix: prefix } : {}) },
    workflows: {
      get: async (name: string, version?: string) =>
        version === undefined || stored[name]?.version === version ? stored[name] : undefined,
    },
  } as unknown as Runtime;
}

describe('Function: deployedCatalog', () => {
  it("serves a deployed workflow with its table record, with the deployment's state machine ARN", async () => {
    const catalog = deployedCatalog(
      runtime({
        brief: {
          name: 'brief',
          stateMachineArn: 'arn:local',
          version: 'v2',
          steps: [{ id: 'draft', kind: 'model', state: 'Draft', states: ['Draft'], lambda: true }],
          edges: [],
          inputSchema: { fields: [] },
        },
      }),
    );
    expect(await catalog.get('brief')).toMatchObject({
      name: 'brief',
      stateMachineArn: ARN('brief'),
      version: 'v2',
      steps: [{ id: 'draft' }],
    });
    expect(await catalog.forRun({ workflow: 'brief', workflowVersion: 'v1' })).toMatchObject({ version: 'v2' });
    expect(await catalog.get('brief', 'v1')).toBeUndefined();
  });

  it('serves one with no record with no declared input and no steps, and knows no other', async () => {
    const catalog = deployedCatalog(runtime({}));
    expect(await catalog.get('triage')).toEqual({
      name: 'triage',
      stateMachineArn: ARN('triage'),
      inputSchema: { fields: [] },
      steps: [],
      edges: [],
      updatedAt: '1970-01-01T00:00:00.000Z',
    });
    expect(await catalog.get('nope')).toBeUndefined();
    expect((await catalog.list()).map((w) => w.name)).toEqual(['brief', 'triage']);
    // A state machine ARN names its workflow; a prefix names any.
    expect((await catalog.get(ARN('triage')))?.name).toBe('triage');
    expect((await deployedCatalog(runtime({}, 'arn:aws:states:eu-west-1:111122223333:stateMachine:')).get('other'))?.stateMachineArn).toBe(
      ARN('other'),
    );
  });
});
