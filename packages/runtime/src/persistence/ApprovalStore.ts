import { createHash } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { RuntimeError } from '../errors/RuntimeError.js';
import { conditionFailureItem, couldBeRecordId, isConditionFailure, unmarshallItem, type Db } from './Db.js';
import { stripKeys } from './RunStore.js';
import { GSI_BY_STATUS } from './Tables.js';

/** PENDING until a human approves or rejects it, or it times out (a timeout is a denial). */
export type ApprovalStatus = 'PENDING' | 'APPROVED' | 'REJECTED' | 'TIMED_OUT';

/** A tool call waiting for a human decision. */
export interface ApprovalRecord {
  readonly approvalId: string;
  readonly runId: string;
  readonly stepId: string;
  readonly tool: string;
  readonly args: unknown;
  /** The Step Functions task token the paused state waits on. */
  readonly taskToken: string;
  readonly status: ApprovalStatus;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly decidedAt?: string;
  readonly decidedBy?: string;
  readonly reason?: string;
  readonly rule?: string;
}

const pk = (id: string) => `APPROVAL#${id}`;
const SK = 'APPROVAL';

/** The namespace of approval ids (RFC 9562 name-based UUIDs over the task token). */
const APPROVAL_NAMESPACE = Buffer.from('5f0c1c8e6b4a4d2a9a51a1d7c3e2b9f4', 'hex');

/**
 * The approval id of a gated call: a name-based UUID (version 5) of its task token. A task that is
 * dispatched again with the same token (an execution resumed after its process ended, a retried
 * invocation) names the same approval, so it finds the one it asked for instead of opening another.
 */
export function approvalIdFor(taskToken: string): string {
  const h = createHash('sha1').update(APPROVAL_NAMESPACE).update(taskToken, 'utf8').digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/**
 * The approval record's item without what only the runtime reads: the step envelope (the decision
 * runs the call with it) and when the approval was announced (see `announced`).
 */
function toRecord(item: Record<string, unknown>): ApprovalRecord {
  const { envelope: _e, announcedAt: _a, ...rest } = stripKeys(item);
  return rest as unknown as ApprovalRecord;
}

/** Approvals in the runtime table; `list` uses the by-status index. */
export class ApprovalStore {
  constructor(private readonly db: Db) {}

  /**
   * Records a PENDING approval for a gated call, once per task token (one conditional put): a
   * second request with the same token returns the approval the first one recorded, in whatever
   * state it is now, with `created: false`. `envelope` (the step envelope, JSON) is kept for the
   * decision, which runs the call; readers of the record do not see it. `announced` says whether
   * the approval was announced (`announced()` ran for it): false for a new one, and for one whose
   * requester ended between recording it and announcing it, which the next request announces.
   */
  async request(p: {
    runId: string;
    stepId: string;
    tool: string;
    args: unknown;
    taskToken: string;
    timeoutSeconds: number;
    rule?: string;
    envelope?: string;
  }): Promise<{ record: ApprovalRecord; created: boolean; announced: boolean }> {
    const now = this.db.clock();
    const createdAt = new Date(now).toISOString();
    const rec: ApprovalRecord = {
      approvalId: approvalIdFor(p.taskToken),
      runId: p.runId,
      stepId: p.stepId,
      tool: p.tool,
      args: this.db.redactor.redact(p.args),
      taskToken: p.taskToken,
      status: 'PENDING',
      createdAt,
      expiresAt: new Date(now + p.timeoutSeconds * 1000).toISOString(),
      ...(p.rule !== undefined ? { rule: p.rule } : {}),
    };
    try {
      await this.db.doc.send(
        new PutCommand({
          TableName: this.db.tableName,
          Item: {
            pk: pk(rec.approvalId),
            sk: SK,
            ...rec,
            ...(p.envelope !== undefined ? { envelope: p.envelope } : {}),
            gsi2pk: 'APPROVALSTATUS#PENDING',
            gsi2sk: `${createdAt}#${rec.approvalId}`,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { record: rec, created: true, announced: false };
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      const existing = await this.#conflictItem(e, rec.approvalId);
      if (!existing) throw e;
      return { record: toRecord(existing), created: false, announced: existing.announcedAt !== undefined };
    }
  }

  /** Records that the approval was announced (its run event written, its queue message sent). */
  async announced(approvalId: string): Promise<void> {
    await this.db.doc.send(
      new UpdateCommand({
        TableName: this.db.tableName,
        Key: { pk: pk(approvalId), sk: SK },
        UpdateExpression: 'SET announcedAt = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': new Date(this.db.clock()).toISOString() },
      }),
    );
  }

  /** The step envelope kept with an approval (JSON), which the decision runs the call with. */
  async envelopeOf(approvalId: string): Promise<string | undefined> {
    const r = await this.db.doc.send(
      new GetCommand({
        TableName: this.db.tableName,
        Key: { pk: pk(approvalId), sk: SK },
        ConsistentRead: true,
        ProjectionExpression: 'envelope',
      }),
    );
    return typeof r.Item?.envelope === 'string' ? r.Item.envelope : undefined;
  }

  /** The item that failed a write's condition: returned with the failure, or (dynalite) read. */
  async #conflictItem(e: unknown, approvalId: string): Promise<Record<string, unknown> | undefined> {
    const raw = conditionFailureItem(e);
    return raw ? unmarshallItem(raw) : this.#item(approvalId);
  }

  async #item(approvalId: string): Promise<Record<string, unknown> | undefined> {
    if (!couldBeRecordId(approvalId)) return undefined;
    const r = await this.db.doc.send(
      new GetCommand({ TableName: this.db.tableName, Key: { pk: pk(approvalId), sk: SK }, ConsistentRead: true }),
    );
    return r.Item;
  }

  async get(approvalId: string): Promise<ApprovalRecord | undefined> {
    const item = await this.#item(approvalId);
    return item ? toRecord(item) : undefined;
  }

  /** Oldest first. */
  async list(status: ApprovalStatus = 'PENDING', limit = 100): Promise<ApprovalRecord[]> {
    const r = await this.db.doc.send(
      new QueryCommand({
        TableName: this.db.tableName,
        IndexName: GSI_BY_STATUS,
        KeyConditionExpression: 'gsi2pk = :pk',
        ExpressionAttributeValues: { ':pk': `APPROVALSTATUS#${status}` },
        Limit: limit,
      }),
    );
    return (r.Items ?? []).map(toRecord);
  }

  /**
   * Decides a PENDING approval (one conditional update: only the first decision counts). A
   * decision after `expiresAt` is recorded as TIMED_OUT instead — a timeout means deny.
   */
  async decide(
    approvalId: string,
    p: { decision: 'APPROVED' | 'REJECTED' | 'TIMED_OUT'; by?: string; reason?: string },
  ): Promise<ApprovalRecord> {
    const now = this.db.clock();
    const nowIso = new Date(now).toISOString();
    const existing = await this.get(approvalId);
    if (!existing) throw new RuntimeError('NotFound', `no approval with id ${approvalId}`);
    const decision = p.decision !== 'TIMED_OUT' && existing.expiresAt < nowIso ? 'TIMED_OUT' : p.decision;
    try {
      const r = await this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.tableName,
          Key: { pk: pk(approvalId), sk: SK },
          UpdateExpression: 'SET #status = :d, decidedAt = :now, decidedBy = :by, reason = :reason, gsi2pk = :g',
          ConditionExpression: '#status = :pending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':d': decision,
            ':now': nowIso,
            ':by': p.by ?? 'unknown',
            ':pending': 'PENDING',
            ':g': `APPROVALSTATUS#${decision}`,
            ':reason': this.db.redactor.redactText(p.reason ?? (decision === 'TIMED_OUT' ? 'approval timed out' : '')),
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return toRecord(r.Attributes ?? {});
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      const old = await this.#conflictItem(e, approvalId);
      throw new RuntimeError('PolicyDenied', `approval ${approvalId} was already decided (${old?.status ?? 'unknown'})`, {
        details: { approvalId, status: old?.status },
      });
    }
  }

  /** Marks every PENDING approval past its deadline TIMED_OUT; returns them (callers fail their task tokens). */
  async expireDue(): Promise<ApprovalRecord[]> {
    const nowIso = new Date(this.db.clock()).toISOString();
    const due = (await this.list('PENDING', 1000)).filter((a) => a.expiresAt < nowIso);
    const out: ApprovalRecord[] = [];
    for (const a of due) {
      try {
        out.push(await this.decide(a.approvalId, { decision: 'TIMED_OUT', by: 'timeout' }));
      } catch (e) {
        if ((e as { name?: string }).name !== 'PolicyDenied') throw e;
      }
    }
    return out;
  }
}
