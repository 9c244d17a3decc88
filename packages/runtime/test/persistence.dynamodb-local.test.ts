// The same persistence suite on DynamoDB Local (the real jar): started once for the file, because
// the JVM takes seconds. Here ReturnValuesOnConditionCheckFailure really returns the old item.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../src/runtime/Runtime.js';
import { makeRuntime, startDynamoDbLocal, type DynamoEndpoint } from './emulators.js';
import { persistenceSuite } from './persistenceSuite.js';
import { PutCommand } from '@aws-sdk/lib-dynamodb';

// STEPFORGE_SKIP_DYNAMODB_LOCAL=1 skips this file (the JVM start is the slowest part of the suite).
const skip = process.env.STEPFORGE_SKIP_DYNAMODB_LOCAL === '1';
let ddb: DynamoEndpoint | undefined;
let rt: Runtime;
beforeAll(async () => {
  if (skip) return;
  ddb = await startDynamoDbLocal();
  rt = await makeRuntime(ddb.endpoint);
}, 120_000);
afterAll(async () => {
  await ddb?.stop();
});

describe.skipIf(skip)('DynamoDB Local', () => {
  persistenceSuite('DynamoDB Local', () => rt);
});

describe.skipIf(skip)('Function: conditionFailureItem (DynamoDB Local)', () => {
  it('gets the old item back from the failed conditional put itself', async () => {
    await rt.db.doc.send(new PutCommand({ TableName: rt.db.tableName, Item: { pk: 'X', sk: 'Y', v: 1 } }));
    const err = await rt.db.doc
      .send(
        new PutCommand({
          TableName: rt.db.tableName,
          Item: { pk: 'X', sk: 'Y', v: 2 },
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      )
      .catch((e: unknown) => e);
    expect((err as { name: string }).name).toBe('ConditionalCheckFailedException');
    expect((err as { Item?: Record<string, unknown> }).Item?.v).toEqual({ N: '1' });
  });
});
