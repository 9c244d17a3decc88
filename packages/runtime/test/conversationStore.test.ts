import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../src/persistence/ConversationStore.js';
import { dynaliteRuntime } from './emulators.js';

const db = dynaliteRuntime();

/** The conversation's items as stored: sort key and how many messages each holds. */
async function items(id: string): Promise<{ sk: string; messages: number }[]> {
  const r = await db.rt.db.doc.send(
    new QueryCommand({
      TableName: db.rt.db.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `CONV#${id}` },
      ConsistentRead: true,
    }),
  );
  return (r.Items ?? []).map((it) => ({ sk: String(it.sk), messages: Array.isArray(it.messages) ? it.messages.length : 1 }));
}

describe('Class: ConversationStore', () => {
  describe('Method: append', () => {
    it("writes a turn's messages as one item, keyed by the position of its first message", async () => {
      const turn1: ChatMessage[] = [
        { role: 'user', content: 'plan' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', tool: 'web-search', args: { q: 'x' } }] },
      ];
      const turn2: ChatMessage[] = [
        { role: 'tool', toolCallId: 'c1', toolName: 'web-search', content: 'found' },
        { role: 'assistant', content: 'done' },
      ];
      let puts = 0;
      const send = db.rt.db.doc.send.bind(db.rt.db.doc);
      db.rt.db.doc.send = ((cmd: unknown) => {
        if (cmd instanceof PutCommand) puts++;
        return send(cmd as never);
      }) as typeof db.rt.db.doc.send;
      try {
        await db.rt.conversations.append('conv-a', 0, turn1);
        await db.rt.conversations.append('conv-a', 2, turn2);
      } finally {
        db.rt.db.doc.send = send;
      }
      expect(puts).toBe(2);
      expect(await items('conv-a')).toEqual([
        { sk: 'MSG#000000', messages: 2 },
        { sk: 'MSG#000002', messages: 2 },
      ]);
      expect(await db.rt.conversations.load('conv-a')).toEqual([...turn1, ...turn2]);
    });

    it('leaves a turn that is there already as it is (a retried turn writes nothing twice)', async () => {
      await db.rt.conversations.append('conv-b', 0, [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'one' },
      ]);
      await db.rt.conversations.append('conv-b', 0, [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'other' },
      ]);
      expect(await db.rt.conversations.load('conv-b')).toEqual([
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'one' },
      ]);
    });

    it('splits a turn whose messages together pass the item size, in order', async () => {
      const big = 'x'.repeat(200 * 1024);
      await db.rt.conversations.append('conv-c', 0, [
        { role: 'tool', toolCallId: 'a', content: big },
        { role: 'tool', toolCallId: 'b', content: big },
        { role: 'assistant', content: 'ok' },
      ]);
      expect(await items('conv-c')).toEqual([
        { sk: 'MSG#000000', messages: 1 },
        { sk: 'MSG#000001', messages: 2 },
      ]);
      expect((await db.rt.conversations.load('conv-c')).map((m) => m.toolCallId ?? m.content)).toEqual(['a', 'b', 'ok']);
    });
  });

  describe('Method: load', () => {
    it('reads conversations stored one message an item, as earlier versions wrote them', async () => {
      for (const [i, m] of [
        { role: 'user', content: 'old' },
        { role: 'assistant', content: 'older' },
      ].entries()) {
        await db.rt.db.doc.send(
          new PutCommand({
            TableName: db.rt.db.tableName,
            Item: { pk: 'CONV#conv-d', sk: `MSG#${String(i).padStart(6, '0')}`, message: m },
          }),
        );
      }
      await db.rt.conversations.append('conv-d', 2, [{ role: 'user', content: 'new' }]);
      expect((await db.rt.conversations.load('conv-d')).map((m) => m.content)).toEqual(['old', 'older', 'new']);
    });
  });
});
