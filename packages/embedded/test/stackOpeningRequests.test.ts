// An owner's first requests are answered by dynalite's thread as its store opens (stackOpeningRequests):
// on a store with the table, they are all the opening asks; on a new one they fail, and the owner
// creates the table itself (openingEpoch says which).
import { describe, it, expect } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { ensureTables } from '@stepforge/runtime';
import { startEmulators } from '../src/startEmulators.js';
import { loopbackDynamoClients } from '../src/loopbackClients.js';
import { IDENTITY_KEY, openingEpoch, stackOpeningRequests } from '../src/stackOpeningRequests.js';
import type { StoreAnswer } from '../src/startDynaliteWorker.js';

const creds = { accessKeyId: 'local', secretAccessKey: 'local' };

/** Opens the store under `dir` with the opening requests of stack `stackId`; returns their answers and the identity item written. */
async function open(dir: string, stackId: string): Promise<{ answers: readonly StoreAnswer[]; created: boolean; identity: unknown }> {
  const emulators = await startEmulators({ dataDir: dir, credentials: creds, prepare: stackOpeningRequests('runs', stackId, '/p') });
  const { dynamodb, dynamodbCommands } = loopbackDynamoClients(emulators.dynamodbEndpoint, creds, () => emulators.connectDynamodb());
  try {
    const answers = await emulators.dynamodbOpened;
    if (openingEpoch(answers) === undefined) {
      // What the owner does then (ownStack): the table, then the writes.
      await ensureTables(dynamodb, 'runs', { absent: emulators.dynamodbCreated });
    }
    const identity = (await dynamodbCommands.send(new GetItemCommand({ TableName: 'runs', Key: IDENTITY_KEY, ConsistentRead: true }))).Item;
    return { answers, created: emulators.dynamodbCreated, identity };
  } finally {
    dynamodb.destroy();
    dynamodbCommands.destroy();
    await emulators.close();
  }
}

describe('Function: stackOpeningRequests', () => {
  it('on a new store: the requests fail (no table), so openingEpoch is undefined; on the next open they are all it takes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-open-'));
    try {
      const first = await open(dir, 'one');
      expect(first.created).toBe(true);
      expect(first.answers.map((a) => [a.statusCode, (JSON.parse(a.body) as { __type?: string }).__type])).toEqual([
        [400, 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException'],
        [400, 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException'],
        [400, 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException'],
      ]);
      expect(openingEpoch(first.answers)).toBeUndefined();
      expect(first.identity).toBeUndefined();

      const second = await open(dir, 'two');
      expect(second.created).toBe(false);
      expect(second.answers.map((a) => a.statusCode)).toEqual([200, 200, 200]);
      expect(openingEpoch(second.answers)).toBe(1);
      expect(second.identity).toEqual({ ...IDENTITY_KEY, stackId: { S: 'two' }, project: { S: '/p' } });

      // Each owner draws the next epoch.
      expect(openingEpoch((await open(dir, 'three')).answers)).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Function: openingEpoch', () => {
  const ok = (body: object): StoreAnswer => ({ statusCode: 200, headers: {}, body: JSON.stringify(body) });
  const epoch = ok({ Attributes: { epoch: { N: '7' } } });
  const table = (TableStatus: string, IndexStatus = 'ACTIVE') => ok({ Table: { TableStatus, GlobalSecondaryIndexes: [{ IndexStatus }] } });

  it('is the epoch drawn when the table was ACTIVE with every index and both writes went through', () => {
    expect(openingEpoch([table('ACTIVE'), epoch, ok({})])).toBe(7);
  });

  it('is undefined for a table or index not ACTIVE yet, a failed write, or missing answers', () => {
    expect(openingEpoch([table('CREATING'), epoch, ok({})])).toBeUndefined();
    expect(openingEpoch([table('ACTIVE', 'CREATING'), epoch, ok({})])).toBeUndefined();
    expect(openingEpoch([table('ACTIVE'), { statusCode: 400, headers: {}, body: '{}' }, ok({})])).toBeUndefined();
    expect(openingEpoch([table('ACTIVE'), epoch, { statusCode: 500, headers: {}, body: '{}' }])).toBeUndefined();
    expect(openingEpoch([])).toBeUndefined();
  });
});
