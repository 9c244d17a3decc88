import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { RuntimeError } from '../errors/RuntimeError.js';
import { conditionFailureItem, isConditionFailure, unmarshallItem, type Db } from './Db.js';
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

/** Approvals in the runtime table; `list` uses the by-status index. */
export class ApprovalStore {
  constructor(private readonly db: Db) {}

  async create(p: { runId: string; stepId: string; tool: string; args: unknown; taskToken: string; timeoutSeconds: number; rule?: string; approvalId?: string }): Promise<ApprovalRecord> {
    const now = this.db.clock();
    const createdAt = new Date(now).toISOString();
    const rec: ApprovalRecord = {
      approvalId: p.approvalId ?? randomUUID(), runId: p.runId, stepId: p.stepId, tool: p.tool,
      args: this.db.redactor.redact(p.args), taskToken: p.taskToken, status: 'PENDING', createdAt,
      expiresAt: new Date(now + p.timeoutSeconds * 1000).toISOString(),
      ...(p.rule !== undefined ? { rule: p.rule } : {}),
    };
    await this.db.doc.send(new PutCommand({
      TableName: this.db.tableName,
      Item: { pk: pk(rec.approvalId), sk: SK, ...rec, gsi2pk: 'APPROVALSTATUS#PENDING', gsi2sk: `${createdAt}#${rec.approvalId}` },
      ConditionExpression: 'attribute_not_exists(pk)',
    }));
    return rec;
  }

  async get(approvalId: string): Promise<ApprovalRecord | undefined> {
    const r = await this.db.doc.send(new GetCommand({ TableName: this.db.tableName, Key: { pk: pk(approvalId), sk: SK }, ConsistentRead: true }));
    return r.Item ? stripKeys(r.Item) as unknown as ApprovalRecord : undefined;
  }

  /** Oldest first. */
  async list(status: ApprovalStatus = 'PENDING', limit = 100): Promise<ApprovalRecord[]> {
    const r = await this.db.doc.send(new QueryCommand({
      TableName: this.db.tableName, IndexName: GSI_BY_STATUS,
      KeyConditionExpression: 'gsi2pk = :pk', ExpressionAttributeValues: { ':pk': `APPROVALSTATUS#${status}` },
      Limit: limit,
    }));
    return (r.Items ?? []).map((i) => stripKeys(i) as unknown as ApprovalRecord);
  }

  /**
   * Decides a PENDING approval (one conditional update: only the first decision counts). A
   * decision after `expiresAt` is recorded as TIMED_OUT instead — a timeout means deny.
   */
  async decide(approvalId: string, p: { decision: 'APPROVED' | 'REJECTED' | 'TIMED_OUT'; by?: string; reason?: string }): Promise<ApprovalRecord> {
    const now = this.db.clock();
    const nowIso = new Date(now).toISOString();
    const existing = await this.get(approvalId);
    if (!existing) throw new RuntimeError('NotFound', `no approval with id ${approvalId}`);
    const decision = p.decision !== 'TIMED_OUT' && existing.expiresAt < nowIso ? 'TIMED_OUT' : p.decision;
    try {
      const r = await this.db.doc.send(new UpdateCommand({
        TableName: this.db.tableName,
        Key: { pk: pk(approvalId), sk: SK },
        UpdateExpression: 'SET #status = :d, decidedAt = :now, decidedBy = :by, reason = :reason, gsi2pk = :g',
        ConditionExpression: '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':d': decision, ':now': nowIso, ':by': p.by ?? 'unknown', ':pending': 'PENDING', ':g': `APPROVALSTATUS#${decision}`,
          ':reason': this.db.redactor.redactText(p.reason ?? (decision === 'TIMED_OUT' ? 'approval timed out' : '')),
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }));
      return stripKeys(r.Attributes ?? {}) as unknown as ApprovalRecord;
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      const raw = conditionFailureItem(e);
      const old = raw ? stripKeys(unmarshallItem(raw)) as unknown as ApprovalRecord : await this.get(approvalId);
      throw new RuntimeError('PolicyDenied', `approval ${approvalId} was already decided (${old?.status ?? 'unknown'})`, { details: { approvalId, status: old?.status } });
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
