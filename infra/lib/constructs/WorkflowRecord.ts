// A deployed workflow's record (input schema, steps, edges, version), written into the runs table at
// deploy time by the workflowRecord custom resource Lambda, so the deployed catalog serves the
// workflow as the embedded one does: starts checked against its declared input, `restart --from`
// finding its steps. The record is built by the runtime from the compile result's manifest
// (workflowRecord) and keyed by its persistence layer (WorkflowStore): nothing here knows the table's layout.
import { CustomResource } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { workflowRecord, type WorkflowRecord as Record } from '@stepforge/runtime';
import type { WorkflowSpec } from '../workflows/WorkflowSpec.js';

/** The custom resource type (CloudFormation's `Custom::` namespace). */
export const WORKFLOW_RECORD_RESOURCE_TYPE = 'Custom::StepforgeWorkflowRecord';

/** Options for WorkflowRecord. */
export interface WorkflowRecordProps {
  /** The workflow as deployed (its ASL is the state machine's definition before substitution). */
  readonly workflow: WorkflowSpec;
  /** The custom resource Lambda (StepHandlers.workflowRecord), already granted its table access. */
  readonly writer: lambda.IFunction;
}

/** One workflow's record in the runs table. */
export class WorkflowRecord extends Construct {
  /** What is written (without the time it is written). */
  readonly record: Record;
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: WorkflowRecordProps) {
    super(scope, id);
    const wf = props.workflow;
    this.record = workflowRecord(wf.manifest, JSON.stringify(wf.asl), wf.file);
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: props.writer.functionArn,
      resourceType: WORKFLOW_RECORD_RESOURCE_TYPE,
      // CloudFormation hands scalars to the Lambda as strings: the record travels as JSON text. A new
      // version changes the text, so the resource updates and the new version is written.
      properties: { Workflow: wf.name, Record: JSON.stringify(this.record) },
    });
  }
}
