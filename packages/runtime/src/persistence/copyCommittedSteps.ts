import {
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  type AttributeValue,
  type QueryCommandOutput,
  type ScanCommandOutput,
} from '@aws-sdk/client-dynamodb';
import type { Db } from './Db.js';
import { IDEM_PREFIX } from './DynamoDBPersistenceLayer.js';
import { runPk, stepSk, STEP_PREFIX } from './RunStore.js';
import { parseStepKey } from './StepRecordPersistenceLayer.js';

/**
 * Copies a run's committed step results (idempotency records) to a fork's keys, for the step
 * instances `carry` keeps. Step keys are `<run>:<step instance>:<hash of what it was asked>`, so a
 * carried-over step whose inputs are unchanged finds its result and does not run again. Records
 * kept on step records go to the fork's step items (with no step status, so they show only once
 * the step is reached); records on IDEM# items (another key of the same instance, or stores
 * written before step records kept them) go to the fork's step item when it has none. Written with
 * the low-level client, so every attribute keeps its exact DynamoDB type. Returns how many it copied.
 */
export async function copyCommittedSteps(
  db: Db,
  parentRunId: string,
  runId: string,
  carry: (stepInstance: string) => boolean,
): Promise<number> {
  const placed = new Set<string>();
  let copied = 0;
  const fork = (key: string) => `${runId}:${key.slice(parentRunId.length + 1)}`;
  const put = (item: Record<string, AttributeValue>) => db.client.send(new PutItemCommand({ TableName: db.tableName, Item: item }));
  let start: Record<string, AttributeValue> | undefined;
  do {
    const r: QueryCommandOutput = await db.client.send(
      new QueryCommand({
        TableName: db.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :step)',
        FilterExpression: 'idem.#status = :done',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':pk': { S: runPk(parentRunId) }, ':step': { S: STEP_PREFIX }, ':done': { S: 'COMPLETED' } },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of r.Items ?? []) {
      const idem = item.idem?.M;
      const key = idem?.key?.S;
      const sk = item.sk?.S ?? '';
      if (!idem || !key?.startsWith(`${parentRunId}:`) || !carry(sk.slice(STEP_PREFIX.length))) continue;
      await put({ pk: { S: runPk(runId) }, sk: { S: sk }, idem: { M: { ...idem, key: { S: fork(key) } } } });
      placed.add(sk);
      copied++;
    }
    start = r.LastEvaluatedKey;
  } while (start);
  do {
    const r: ScanCommandOutput = await db.client.send(
      new ScanCommand({
        TableName: db.tableName,
        FilterExpression: 'runId = :run AND begins_with(pk, :idem) AND #status = :done',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':run': { S: parentRunId }, ':idem': { S: IDEM_PREFIX }, ':done': { S: 'COMPLETED' } },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of r.Items ?? []) {
      const key = item.key?.S;
      const instance = item.stepId?.S ?? '';
      if (!key?.startsWith(`${parentRunId}:`) || !carry(instance)) continue;
      const newKey = fork(key);
      const at = parseStepKey(newKey);
      const sk = at ? stepSk(at.stepId) : undefined;
      if (at && sk && !placed.has(sk)) {
        const { pk: _pk, sk: _sk, ttl: _ttl, runId: _run, stepId: _step, ...record } = item;
        await put({ pk: { S: runPk(runId) }, sk: { S: sk }, idem: { M: { ...record, key: { S: newKey } } } });
        placed.add(sk);
      } else {
        await put({ ...item, pk: { S: `${IDEM_PREFIX}${newKey}` }, key: { S: newKey }, runId: { S: runId } });
      }
      copied++;
    }
    start = r.LastEvaluatedKey;
  } while (start);
  return copied;
}
