// A workflow's record, as its compile result gives it: what the run service needs of a workflow
// beyond its state machine (the input schema every start is checked against, the steps progress
// shows, the edges `restart --from` follows) and the version each run records. The embedded
// catalog writes one when it registers a workflow; the CDK app has one written when it deploys a
// workflow (the workflowRecord custom resource): both platforms serve a workflow from the same record.
import { createHash } from 'node:crypto';
import type { StepManifest } from '@stepforge/contract';
import type { CatalogStep, WorkflowEntry } from './ports.js';

/** A WorkflowEntry without what the platform adds: the state machine's ARN, when it was written, the policy. */
export type WorkflowRecord = Omit<WorkflowEntry, 'stateMachineArn' | 'updatedAt' | 'policy'>;

/** The record of a compiled workflow: its manifest, and its definition as the state machine gets it. */
export function workflowRecord(manifest: StepManifest, definition: string, file?: string): WorkflowRecord {
  const steps: CatalogStep[] = manifest.steps.map((s) => ({
    id: s.id,
    kind: s.kind,
    state: s.state,
    states: s.states,
    ...(s.parent !== undefined ? { parent: s.parent } : {}),
    lambda: s.handler !== null,
  }));
  const edges = manifest.edges.map(([a, b]) => [a, b] as [string, string]);
  const { format, inputSchema } = manifest;
  // Over what a run of it is: a change to any of these is another version, which forks refuse to mix.
  const version = createHash('sha256').update(JSON.stringify({ definition, format, inputSchema, steps, edges })).digest('hex').slice(0, 16);
  return {
    name: manifest.workflow,
    displayName: manifest.displayName,
    ...(file !== undefined ? { file } : {}),
    format,
    inputSchema,
    steps,
    edges,
    version,
  };
}

/** Why `value` is not a WorkflowRecord of workflow `name` (undefined: it is one). */
export function workflowRecordProblem(value: unknown, name: string): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'the record is not an object';
  const r = value as Record<string, unknown>;
  if (r.name !== name) return `the record names workflow ${JSON.stringify(r.name)}, not '${name}'`;
  if (typeof r.version !== 'string' || r.version === '') return 'the record has no version';
  if (
    !Array.isArray(r.steps) ||
    !r.steps.every((s) => s !== null && typeof s === 'object' && typeof (s as { id?: unknown }).id === 'string')
  )
    return "the record's steps are not a list of steps with ids";
  if (!Array.isArray(r.edges) || !r.edges.every((e) => Array.isArray(e) && e.length === 2 && e.every((x) => typeof x === 'string')))
    return "the record's edges are not [from, to] step id pairs";
  const schema = r.inputSchema as { fields?: unknown } | null | undefined;
  if (schema === null || typeof schema !== 'object' || !Array.isArray(schema.fields)) return 'the record has no input schema';
  return undefined;
}
