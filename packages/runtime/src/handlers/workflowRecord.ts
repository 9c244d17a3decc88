// The CDK app's custom resource that writes a deployed workflow's record (WorkflowStore: input
// schema, steps, edges, version) into the runs table at deploy time, so the deployed catalog
// checks every start against the declared input and finds the steps `restart --from` names, as
// the embedded catalog does. A custom resource rather than the record baked into the api and
// trigger bundles: every version ever deployed stays in the table, so a run started before a
// deploy is still shown with its own steps and its forks are refused as `workflow_changed`
// rather than run on another workflow; the keys stay the persistence layer's; and the records
// are in the template, where the synth test reads them. CloudFormation invokes the function
// directly (no provider framework, so no extra Lambda and role), and it answers at the
// pre-signed ResponseURL itself.
import type { Runtime } from '../runtime/Runtime.js';
import { workflowRecordProblem, type WorkflowRecord } from '../runs/workflowRecord.js';
import { defaultRuntime } from './defaultRuntime.js';

/** The custom resource's properties (CloudFormation passes scalars as strings: the record travels as JSON text). */
export interface WorkflowRecordProperties {
  /** The workflow name (the state machine's). */
  readonly Workflow: string;
  /** The record (WorkflowRecord) as JSON. */
  readonly Record: string;
}

/** A CloudFormation custom resource request. */
export interface WorkflowRecordEvent {
  readonly RequestType: 'Create' | 'Update' | 'Delete';
  readonly ResponseURL: string;
  readonly StackId: string;
  readonly RequestId: string;
  readonly LogicalResourceId: string;
  readonly PhysicalResourceId?: string;
  readonly ResourceProperties: WorkflowRecordProperties;
}

/** What CloudFormation is answered. */
export interface CustomResourceResponse {
  readonly Status: 'SUCCESS' | 'FAILED';
  readonly Reason?: string;
  readonly PhysicalResourceId: string;
  readonly StackId: string;
  readonly RequestId: string;
  readonly LogicalResourceId: string;
}

/** Answers CloudFormation: a PUT of the response to the pre-signed URL (no content type, as S3 signed it). */
export async function putResponse(url: string, response: CustomResourceResponse): Promise<void> {
  const body = JSON.stringify(response);
  const r = await fetch(url, { method: 'PUT', body, headers: { 'content-type': '', 'content-length': String(Buffer.byteLength(body)) } });
  if (!r.ok) throw new Error(`CloudFormation's response URL answered ${r.status}`);
}

/**
 * Create and Update write the record as the workflow's current one and as its version's; Delete
 * writes nothing and removes nothing: the deployed catalog serves only the workflows the stack's
 * environment lists, and runs of an older version keep finding their steps. A record that is not
 * one fails the deployment (FAILED, with the reason), rather than leave the workflow unchecked.
 */
export async function handleWorkflowRecordEvent(
  rt: Runtime,
  event: WorkflowRecordEvent,
  respond: typeof putResponse = putResponse,
): Promise<CustomResourceResponse> {
  const name = event.ResourceProperties?.Workflow;
  const answer = (status: CustomResourceResponse['Status'], reason?: string): CustomResourceResponse => ({
    Status: status,
    ...(reason !== undefined ? { Reason: reason } : {}),
    PhysicalResourceId: event.PhysicalResourceId ?? `stepforge-workflow-record-${name}`,
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
  });
  let response: CustomResourceResponse;
  try {
    if (event.RequestType === 'Delete') response = answer('SUCCESS');
    else {
      if (typeof name !== 'string' || name === '') throw new Error('the custom resource names no workflow (Workflow)');
      const record = JSON.parse(event.ResourceProperties.Record) as WorkflowRecord;
      const problem = workflowRecordProblem(record, name);
      if (problem !== undefined) throw new Error(`workflow '${name}': ${problem}`);
      await rt.workflows.put(name, record.version!, { ...record, updatedAt: new Date().toISOString() });
      response = { ...answer('SUCCESS'), PhysicalResourceId: `stepforge-workflow-record-${name}` };
    }
  } catch (e) {
    rt.logger.error('workflow record not written', { workflow: name, errorName: (e as Error).name, errorMessage: (e as Error).message });
    response = answer('FAILED', (e as Error).message);
  }
  await respond(event.ResponseURL, response);
  return response;
}

/** Lambda entry point (CloudFormation custom resource). */
export const handler = async (event: WorkflowRecordEvent): Promise<CustomResourceResponse> =>
  handleWorkflowRecordEvent(defaultRuntime(), event);
