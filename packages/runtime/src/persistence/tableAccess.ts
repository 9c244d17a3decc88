// Which item collections of the run table each handler touches, and with which DynamoDB actions.
// Kept here, beside the stores that own the key prefixes, so the deployed roles (infra turns this
// into IAM statements with dynamodb:LeadingKeys conditions) follow the code that uses the table.
import { GSI_BY_STATUS, GSI_BY_WORKFLOW } from './Tables.js';

/** The key prefix of each item collection (its partition key starts with it). */
export const ITEM_COLLECTIONS = {
  /** RunStore: the run record, its step records and its events (`RUN#<run id>`). */
  run: 'RUN#',
  /** RunStore: the run an idempotency key started (`RUNKEY#<key>`). */
  runKey: 'RUNKEY#',
  /** DynamoDBPersistenceLayer: step idempotency records kept apart from the step record (`IDEM#<key>`). */
  idempotency: 'IDEM#',
  /** ApprovalStore: gated tool calls (`APPROVAL#<id>`). */
  approval: 'APPROVAL#',
  /** BlobStore: outputs too large to travel inline, in chunks (`BLOB#<sha256>`). */
  blob: 'BLOB#',
  /** ConversationStore: an agent loop's messages (`CONV#<run>#<step>`). */
  conversation: 'CONV#',
  /** WorkflowStore: a registered workflow's entry (input schema, steps), latest and per version (`WORKFLOW#<name>`). */
  workflow: 'WORKFLOW#',
} as const;

/**
 * A DynamoDB data-plane action the runtime uses. It never transacts, scans only where a handler
 * says why (TableAccess.scan), and batches only to write a workflow's record (current and version
 * in one request).
 */
export type TableAction = 'GetItem' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'Query' | 'BatchWriteItem';

/** The actions a handler uses on some item collections. */
export interface CollectionAccess {
  readonly collections: readonly (keyof typeof ITEM_COLLECTIONS)[];
  readonly actions: readonly TableAction[];
}

/** One handler's access: item collections on the table, and the indexes it queries. */
export interface TableAccess {
  readonly items: readonly CollectionAccess[];
  readonly indexes: readonly string[];
  /**
   * Why the handler scans the table, when it must: a Scan names no partition key, so it cannot be
   * confined to item collections, and is granted on its own only where a reason is given here.
   */
  readonly scan?: string;
}

/**
 * What every step runs through (executeStep): the step record and events under the run
 * (get, conditional put, update; the run record is read to see a cancelled run), idempotency
 * records (a failed attempt deletes its claim, as Powertools does), and large outputs (put in
 * chunks, read back with a query).
 */
const STEP: readonly CollectionAccess[] = [
  { collections: ['run'], actions: ['GetItem', 'PutItem', 'UpdateItem', 'Query'] },
  { collections: ['idempotency'], actions: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'] },
  { collections: ['blob'], actions: ['PutItem', 'Query'] },
];
/** A gated tool call records its approval request and reads the decision. */
const APPROVALS: CollectionAccess = { collections: ['approval'], actions: ['GetItem', 'PutItem', 'UpdateItem'] };

/** Per handler id (the contract's, plus the Python function Lambda's `pythonFunction`). */
export const TABLE_ACCESS: Readonly<Record<string, TableAccess>> = {
  // The agent loop keeps its conversation: appended with puts, loaded with a query.
  model: { items: [...STEP, { collections: ['conversation'], actions: ['PutItem', 'Query'] }], indexes: [] },
  tool: { items: [...STEP, APPROVALS], indexes: [] },
  mcpTool: { items: [...STEP, APPROVALS], indexes: [] },
  connector: { items: STEP, indexes: [] },
  function: { items: STEP, indexes: [] },
  // stepforge_lambda.py: the same step records, idempotency records and blobs as executeStep.
  pythonFunction: { items: STEP, indexes: [] },
  // startWorkflowRun: the idempotency key's claim, then the run record (no step records).
  trigger: {
    items: [
      { collections: ['runKey'], actions: ['GetItem', 'PutItem'] },
      { collections: ['run'], actions: ['GetItem', 'PutItem', 'UpdateItem'] },
      // The deployed catalog reads the workflow's record (its input schema) to check the input.
      { collections: ['workflow'], actions: ['GetItem'] },
    ],
    indexes: [],
  },
  // Expiry: pending approvals from the status index, each decided with a conditional update, the
  // run's event recorded and its record read (approvals of ended runs are left alone).
  approvals: {
    items: [
      { collections: ['approval'], actions: ['GetItem', 'UpdateItem'] },
      { collections: ['run'], actions: ['GetItem', 'PutItem', 'Query'] },
    ],
    indexes: [GSI_BY_STATUS],
  },
  // The deploy-time writer of workflow records (a custom resource): a workflow's current record
  // and its version's, in one batch, and nothing else of the table.
  workflowRecord: { items: [{ collections: ['workflow'], actions: ['BatchWriteItem'] }], indexes: [] },
  // The HTTP API starts, lists, shows and forks runs and decides approvals; an approved tool call
  // runs here, as a tool step (step records, idempotency, blobs). It never reads conversations.
  api: {
    items: [
      { collections: ['runKey'], actions: ['GetItem', 'PutItem'] },
      { collections: ['run'], actions: ['GetItem', 'PutItem', 'UpdateItem', 'Query'] },
      { collections: ['idempotency'], actions: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'] },
      { collections: ['blob'], actions: ['PutItem', 'Query'] },
      APPROVALS,
      // The deployed catalog reads a workflow's record (input schema, steps) for starts and restarts.
      { collections: ['workflow'], actions: ['GetItem'] },
    ],
    indexes: [GSI_BY_WORKFLOW, GSI_BY_STATUS],
    scan: "a fork (retry, restart --from) copies the parent run's committed results; those a step instance committed under other inputs sit in IDEM# items that only a filtered scan finds (copyCommittedSteps)",
  },
};
