import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Db } from './Db.js';

/** One message of an agent conversation (provider-neutral). */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: string;
  /** Tool calls the assistant asked for. */
  readonly toolCalls?: readonly { readonly id: string; readonly tool: string; readonly args: unknown }[];
  /** For role `tool`: which call this answers. */
  readonly toolCallId?: string;
  readonly toolName?: string;
}

/**
 * Agent conversations live here, keyed by run and step, so the Step Functions state only
 * carries the turn counter — never the transcript (which would blow the 256 KiB payload cap).
 */
export class ConversationStore {
  constructor(private readonly db: Db) {}

  async load(conversationId: string): Promise<ChatMessage[]> {
    const out: ChatMessage[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const r = await this.db.doc.send(
        new QueryCommand({
          TableName: this.db.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': `CONV#${conversationId}` },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      // An item holds one message (`message`, as earlier versions wrote them) or a turn's (`messages`).
      for (const it of r.Items ?? []) {
        if (Array.isArray(it.messages)) out.push(...(it.messages as ChatMessage[]));
        else out.push(it.message as ChatMessage);
      }
      start = r.LastEvaluatedKey;
    } while (start);
    return out;
  }

  /**
   * Appends messages at positions `from`, `from+1`, …: a turn's messages in one put (more only when
   * they pass MAX_ITEM_BYTES together), keyed by the position of its first message. Each put is
   * conditional on the slot being empty, so a retried turn that already wrote its messages does
   * not duplicate them; a put is one item, so a turn's messages are stored whole or not at all.
   */
  async append(conversationId: string, from: number, messages: readonly ChatMessage[]): Promise<void> {
    let at = from;
    for (const group of packed(messages.map((m) => this.db.redactor.redact(m)))) {
      try {
        await this.db.doc.send(
          new PutCommand({
            TableName: this.db.tableName,
            Item: { pk: `CONV#${conversationId}`, sk: `MSG#${String(at).padStart(6, '0')}`, messages: group },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
      } catch (e) {
        if ((e as { name?: string }).name !== 'ConditionalCheckFailedException') throw e;
      }
      at += group.length;
    }
  }
}

/**
 * The most message text one item holds. DynamoDB's item limit is 400 KB; a turn's messages go in one
 * item below this, leaving room for the keys and the attribute encoding.
 */
const MAX_ITEM_BYTES = 300 * 1024;

/** Messages in order, grouped so that each group's JSON stays under MAX_ITEM_BYTES (a larger message alone). */
function packed(messages: readonly ChatMessage[]): ChatMessage[][] {
  const groups: ChatMessage[][] = [];
  let current: ChatMessage[] = [];
  let bytes = 0;
  for (const m of messages) {
    const size = Buffer.byteLength(JSON.stringify(m));
    if (current.length > 0 && bytes + size > MAX_ITEM_BYTES) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(m);
    bytes += size;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}
