import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailureItem, isConditionFailure, unmarshallItem, type Db } from './Db.js';
import {
  BasePersistenceLayer,
  IdempotencyItemAlreadyExistsError,
  IdempotencyLeaseLostError,
  idempotencyRecordOf,
  type ClaimParams,
  type IdempotencyRecord,
  type UnclaimedSuccess,
} from './IdempotencyRecord.js';

/** The partition key prefix of an idempotency record kept on its own item (not on a step record). */
export const IDEM_PREFIX = 'IDEM#';
const pk = (key: string) => `${IDEM_PREFIX}${key}`;
const SK = 'IDEM';

/** DynamoDB provider of the idempotency persistence layer (the runtime's single table). */
export class DynamoDBPersistenceLayer extends BasePersistenceLayer {
  constructor(private readonly db: Db) {
    super();
  }

  async saveInProgress(key: string, p: ClaimParams): Promise<void> {
    const expiresAt = Math.floor(p.nowMs / 1000) + p.ttlSeconds;
    // A lease that ran out may be taken over — but only if its holder never reached outside,
    // unless the call is idempotent. This is the whole crash-safety rule, in one condition.
    // No parentheses (AND binds tighter than OR): dynalite's parser backtracks on each group.
    const takeover = p.idempotent
      ? '#status = :inprogress AND #lease < :nowMs'
      : '#status = :inprogress AND #lease < :nowMs AND attribute_not_exists(dispatchedAt)';
    try {
      await this.db.doc.send(
        new PutCommand({
          TableName: this.db.tableName,
          Item: {
            pk: pk(key),
            sk: SK,
            key,
            status: 'INPROGRESS',
            expiresAt,
            ttl: expiresAt,
            leaseExpiresAt: p.nowMs + p.leaseSeconds * 1000,
            leaseId: p.leaseId,
            runId: p.runId,
            stepId: p.stepId,
            idempotent: p.idempotent,
            ...(p.leaseEpoch !== undefined ? { leaseEpoch: p.leaseEpoch } : {}),
            // The marker as markDispatched writes it (its `idempotent` is the call's).
            ...(p.dispatch
              ? {
                  dispatchedAt: p.dispatch.atMs,
                  dispatchTarget: this.db.redactor.redactText(p.dispatch.target),
                  idempotent: p.dispatch.idempotent,
                }
              : {}),
          },
          ConditionExpression: `attribute_not_exists(pk) OR expiresAt < :nowS OR ${takeover}`,
          ExpressionAttributeNames: { '#status': 'status', '#lease': 'leaseExpiresAt' },
          ExpressionAttributeValues: { ':nowS': Math.floor(p.nowMs / 1000), ':nowMs': p.nowMs, ':inprogress': 'INPROGRESS' },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      const raw = conditionFailureItem(e);
      // DynamoDB (and DynamoDB Local) return the old item with the failure. dynalite predates
      // ReturnValuesOnConditionCheckFailure, so there — only there — fall back to a consistent read.
      const existing = raw !== undefined ? idempotencyRecordOf(unmarshallItem(raw)) : await this.getRecord(key);
      if (existing === undefined) throw e;
      throw new IdempotencyItemAlreadyExistsError(existing);
    }
  }

  override async saveUnclaimedSuccess(key: string, p: UnclaimedSuccess): Promise<boolean> {
    const expiresAt = Math.floor(p.nowMs / 1000) + p.ttlSeconds;
    try {
      await this.db.doc.send(
        new PutCommand({
          TableName: this.db.tableName,
          Item: {
            pk: pk(key),
            sk: SK,
            key,
            status: 'COMPLETED',
            expiresAt,
            ttl: expiresAt,
            leaseExpiresAt: p.nowMs,
            leaseId: p.leaseId,
            runId: p.runId,
            stepId: p.stepId,
            idempotent: p.idempotent,
            ...(p.leaseEpoch !== undefined ? { leaseEpoch: p.leaseEpoch } : {}),
            output: this.db.redactor.redact(p.output) ?? null,
            completedAt: p.nowMs,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }

  async markDispatched(key: string, p: { leaseId: string; nowMs: number; target: string; idempotent: boolean }): Promise<void> {
    await this.#leaseUpdate(key, p.leaseId, 'SET dispatchedAt = :at, dispatchTarget = :target, idempotent = :idem', {
      ':at': p.nowMs,
      ':target': this.db.redactor.redactText(p.target),
      ':idem': p.idempotent,
    });
  }

  async saveSuccess(key: string, p: { leaseId: string; output: unknown; nowMs: number; ttlSeconds: number }): Promise<void> {
    const expiresAt = Math.floor(p.nowMs / 1000) + p.ttlSeconds;
    await this.#leaseUpdate(
      key,
      p.leaseId,
      'SET #status = :completed, #output = :output, expiresAt = :exp, #ttl = :exp, completedAt = :now',
      {
        ':completed': 'COMPLETED',
        ':output': this.db.redactor.redact(p.output) ?? null,
        ':exp': expiresAt,
        ':now': p.nowMs,
      },
      { '#status': 'status', '#output': 'output', '#ttl': 'ttl' },
    );
  }

  async releaseLease(key: string, p: { leaseId: string }): Promise<void> {
    await this.#leaseUpdate(key, p.leaseId, 'SET leaseExpiresAt = :zero', { ':zero': 0 });
  }

  async deleteRecord(key: string, p: { leaseId?: string }): Promise<void> {
    try {
      await this.db.doc.send(
        new DeleteCommand({
          TableName: this.db.tableName,
          Key: { pk: pk(key), sk: SK },
          ...(p.leaseId !== undefined
            ? { ConditionExpression: 'leaseId = :lease', ExpressionAttributeValues: { ':lease': p.leaseId } }
            : {}),
        }),
      );
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
  }

  async getRecord(key: string): Promise<IdempotencyRecord | undefined> {
    const r = await this.db.doc.send(new GetCommand({ TableName: this.db.tableName, Key: { pk: pk(key), sk: SK }, ConsistentRead: true }));
    return r.Item ? idempotencyRecordOf(r.Item) : undefined;
  }

  async #leaseUpdate(
    key: string,
    leaseId: string,
    update: string,
    values: Record<string, unknown>,
    names?: Record<string, string>,
  ): Promise<void> {
    try {
      await this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.tableName,
          Key: { pk: pk(key), sk: SK },
          UpdateExpression: update,
          ConditionExpression: 'leaseId = :lease',
          ExpressionAttributeValues: { ...values, ':lease': leaseId },
          ...(names ? { ExpressionAttributeNames: names } : {}),
        }),
      );
    } catch (e) {
      if (isConditionFailure(e)) throw new IdempotencyLeaseLostError(key);
      throw e;
    }
  }
}
