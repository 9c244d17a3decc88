import {
  BatchWriteItemCommand,
  GetItemCommand,
  ScanCommand,
  type AttributeValue,
  type BatchWriteItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import type { Db } from './Db.js';

const pk = (name: string) => `WORKFLOW#${name}`;
/** The sort key of the current entry, and of each version's (one per hash, so its steps and ASL never change). */
const LATEST_SK = 'WORKFLOW';
const versionSk = (version: string) => `VERSION#${version}`;

/**
 * The workflows' records, one small record per workflow (its catalog entry, as JSON) under
 * `WORKFLOW#<name>`, and one per version, so that any process — `runs restart` computing a
 * downstream set, `serve` listing workflows, the deployed API checking a start's input — knows the
 * topology without the source file. The embedded stack writes them when it registers a workflow,
 * the AWS stack when it deploys one (handlers/workflowRecord.ts). The entry's shape is the run
 * service's (WorkflowEntry); the store keeps it whole.
 */
export class WorkflowStore {
  constructor(private readonly db: Db) {}

  /** Writes the entry as the workflow's current one and as its `version`'s. */
  async put(name: string, version: string, entry: object): Promise<void> {
    const body = { S: JSON.stringify(entry) };
    let items: BatchWriteItemCommandInput['RequestItems'] = {
      [this.db.tableName]: [LATEST_SK, versionSk(version)].map((sk) => ({
        PutRequest: { Item: { pk: { S: pk(name) }, sk: { S: sk }, body } },
      })),
    };
    // One request for both; what DynamoDB leaves unprocessed (throttling) is sent again.
    while (items && Object.keys(items).length > 0)
      items = (await this.db.client.send(new BatchWriteItemCommand({ RequestItems: items }))).UnprocessedItems;
  }

  /** The current entry, or the one of `version` (undefined when that version is not kept). */
  async get<T>(name: string, version?: string): Promise<T | undefined> {
    const sk = version === undefined ? LATEST_SK : versionSk(version);
    const r = await this.db.client.send(
      new GetItemCommand({ TableName: this.db.tableName, Key: { pk: { S: pk(name) }, sk: { S: sk } }, ConsistentRead: true }),
    );
    const body = r.Item?.body?.S;
    return body ? (JSON.parse(body) as T) : undefined;
  }

  /** Every current entry (unsorted). */
  async list<T>(): Promise<T[]> {
    const out: T[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      // A small set of records in the runs table: a filtered scan is fine embedded.
      const r = await this.db.client.send(
        new ScanCommand({
          TableName: this.db.tableName,
          FilterExpression: 'sk = :sk',
          ExpressionAttributeValues: { ':sk': { S: LATEST_SK } },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const it of r.Items ?? []) if (it.body?.S) out.push(JSON.parse(it.body.S) as T);
      start = r.LastEvaluatedKey;
    } while (start);
    return out;
  }
}
