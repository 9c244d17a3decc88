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
      const r = await this.db.doc.send(new QueryCommand({
        TableName: this.db.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': `CONV#${conversationId}` },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }));
      for (const it of r.Items ?? []) out.push(it.message as ChatMessage);
      start = r.LastEvaluatedKey;
    } while (start);
    return out;
  }

  /**
   * Appends messages at positions `from`, `from+1`, … Each put is conditional on the slot being
   * empty, so a retried turn that already wrote its messages does not duplicate them.
   */
  async append(conversationId: string, from: number, messages: readonly ChatMessage[]): Promise<void> {
    for (let i = 0; i < messages.length; i++) {
      try {
        await this.db.doc.send(new PutCommand({
          TableName: this.db.tableName,
          Item: { pk: `CONV#${conversationId}`, sk: `MSG#${String(from + i).padStart(6, '0')}`, message: this.db.redactor.redact(messages[i]) },
          ConditionExpression: 'attribute_not_exists(pk)',
        }));
      } catch (e) {
        if ((e as { name?: string }).name !== 'ConditionalCheckFailedException') throw e;
      }
    }
  }
}
