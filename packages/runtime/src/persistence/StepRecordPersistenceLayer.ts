import { PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailureItem, isConditionFailure, marshallItem, unmarshallItem, type Db } from './Db.js';
import type { DynamoDBPersistenceLayer } from './DynamoDBPersistenceLayer.js';
import {
  BasePersistenceLayer,
  IdempotencyItemAlreadyExistsError,
  IdempotencyLeaseLostError,
  idempotencyRecordOf,
  type ClaimParams,
  type CommittedStep,
  type IdempotencyRecord,
  type UnclaimedSuccess,
} from './IdempotencyRecord.js';
import { runPk, stepSk, type RunStore } from './RunStore.js';

/** Where a step key's record lives: the run and the step instance it names. */
export interface StepKeyParts {
  readonly runId: string;
  readonly stepId: string;
}

// `<runId>:<step instance>:<24 hex digits of the request hash>` (stepIdempotencyKey). Run ids
// (execution names) hold no ':'; the instance may (`review[2]:generator#turn1`).
const STEP_KEY = /^([^:]+):(.+):([0-9a-f]{24})$/;

/** The run and step instance of a step idempotency key, or undefined for any other key. */
export function parseStepKey(key: string): StepKeyParts | undefined {
  const m = STEP_KEY.exec(key);
  return m ? { runId: m[1]!, stepId: m[2]! } : undefined;
}

const NAMES = { '#key': 'key', '#status': 'status' };

/**
 * The idempotency layer the runtime uses: a step execution's idempotency record is kept on its
 * step record (`RUN#<run>` / `STEP#<instance>`, under `idem`), so a step costs two conditional
 * writes — the claim, which also marks the step RUNNING and counts the attempt, and the commit,
 * which also records SUCCEEDED (the output stays in the committed value alone) — instead of
 * four; one, for an attempt that commits without a claim (saveUnclaimedSuccess). The model is
 * unchanged: one conditional write per operation, the old record returned on conflict, updates
 * conditional on the lease. Keys that are not step keys, and a step key whose step record
 * already holds another key's record (same instance, other inputs), use the plain `IDEM#<key>`
 * items of `generic`.
 * Step records have no TTL, so neither do the idempotency records on them; `expiresAt` still ends
 * them logically.
 */
export class StepRecordPersistenceLayer extends BasePersistenceLayer {
  override readonly keepsStepRecords = true;

  constructor(
    private readonly db: Db,
    private readonly generic: DynamoDBPersistenceLayer,
    private readonly runs: RunStore,
  ) {
    super();
  }

  async saveInProgress(key: string, p: ClaimParams): Promise<void> {
    const at = parseStepKey(key);
    if (!at) return this.generic.saveInProgress(key, p);
    const expiresAt = Math.floor(p.nowMs / 1000) + p.ttlSeconds;
    // The same takeover rule as the IDEM# items, on the record of this key only. Written with no
    // parentheses (AND binds tighter than OR): dynalite's expression parser backtracks on every
    // nested group, and this condition nested took it about 16 ms to parse, flat under 0.5 ms.
    const mine = 'idem.#key = :key AND';
    const takeover = `${mine} idem.#status = :inprogress AND idem.leaseExpiresAt < :nowMs${p.idempotent ? '' : ' AND attribute_not_exists(idem.dispatchedAt)'}`;
    const idem = {
      key,
      status: 'INPROGRESS',
      expiresAt,
      leaseExpiresAt: p.nowMs + p.leaseSeconds * 1000,
      leaseId: p.leaseId,
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
    };
    const now = new Date(p.nowMs).toISOString();
    const item = { pk: runPk(at.runId), sk: stepSk(at.stepId) };
    // A step's first attempt finds no record: one conditional put creates it (the commonest case,
    // and the cheapest write). A record that exists goes through the update below, whose
    // condition decides; a record of this key that is completed and current is returned as is.
    const created = await this.#conditional(at, () =>
      this.db.commands.send(
        new PutItemCommand({
          TableName: this.db.tableName,
          Item: marshallItem({
            ...item,
            type: 'step',
            runId: at.runId,
            stepId: at.stepId,
            status: 'RUNNING',
            attempts: 1,
            startedAt: now,
            idem,
          }),
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    if (created === undefined) return;
    const first = created.idem as Record<string, unknown> | undefined;
    if (first?.key === key && first.status === 'COMPLETED' && Number(first.expiresAt) * 1000 >= p.nowMs) {
      throw new IdempotencyItemAlreadyExistsError(toRecord(first, at));
    }
    const old = await this.#conditional(at, () =>
      this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.tableName,
          Key: item,
          UpdateExpression:
            'SET idem = :idem, #status = :running, startedAt = if_not_exists(startedAt, :now), runId = :run, stepId = :step, #type = :type ADD attempts :one',
          ConditionExpression: `attribute_not_exists(idem) OR ${mine} idem.expiresAt < :nowS OR ${takeover}`,
          ExpressionAttributeNames: { ...NAMES, '#type': 'type' },
          ExpressionAttributeValues: {
            ':idem': idem,
            ':running': 'RUNNING',
            ':now': now,
            ':run': at.runId,
            ':step': at.stepId,
            ':type': 'step',
            ':one': 1,
            ':key': key,
            ':nowS': Math.floor(p.nowMs / 1000),
            ':nowMs': p.nowMs,
            ':inprogress': 'INPROGRESS',
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    if (old === undefined) return;
    const held = old.idem as Record<string, unknown> | undefined;
    if (held?.key === key) throw new IdempotencyItemAlreadyExistsError(toRecord(held, at));
    // The record went away between the write and the read: claim again.
    if (held === undefined) return this.saveInProgress(key, p);
    // Another key's record is on this step: keep it, and claim this key on its own item.
    await this.generic.saveInProgress(key, p);
    await this.runs.stepStarted(at.runId, at.stepId);
  }

  /**
   * The step record a claim and its commit would leave, in one put made only where the step has
   * no record (a retry after a failure, a fork's carried-over result, another attempt's lease:
   * false, and the attempt claims as usual).
   */
  override async saveUnclaimedSuccess(key: string, p: UnclaimedSuccess): Promise<boolean> {
    const at = parseStepKey(key);
    if (!at) return this.generic.saveUnclaimedSuccess(key, p);
    if (!p.step) return false;
    const output = this.db.redactor.redact(p.output) ?? null;
    const idem = {
      key,
      status: 'COMPLETED',
      expiresAt: Math.floor(p.nowMs / 1000) + p.ttlSeconds,
      leaseExpiresAt: p.nowMs,
      leaseId: p.leaseId,
      idempotent: p.idempotent,
      ...(p.leaseEpoch !== undefined ? { leaseEpoch: p.leaseEpoch } : {}),
      output,
      completedAt: p.nowMs,
    };
    const item = {
      pk: runPk(at.runId),
      sk: stepSk(at.stepId),
      type: 'step',
      runId: at.runId,
      stepId: at.stepId,
      status: 'SUCCEEDED',
      attempts: 1,
      startedAt: new Date(p.startedAtMs).toISOString(),
      endedAt: new Date(this.db.clock()).toISOString(),
      idem,
      // As saveSuccess keeps it: the output once, in the committed value, when that holds it.
      ...(holdsStepOutput(p.output, p.step.output) ? {} : { output: this.db.redactor.redact(p.step.output) ?? null }),
      ...(p.step.outputRef !== undefined ? { outputRef: p.step.outputRef } : {}),
      ...(p.step.usage !== undefined ? { usage: p.step.usage } : {}),
    };
    try {
      await this.db.commands.send(
        new PutItemCommand({ TableName: this.db.tableName, Item: marshallItem(item), ConditionExpression: 'attribute_not_exists(pk)' }),
      );
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }

  /** Runs a conditional write: undefined when it succeeded, else the item that failed the condition. */
  async #conditional(at: StepKeyParts, write: () => Promise<unknown>): Promise<Record<string, unknown> | undefined> {
    try {
      await write();
      return undefined;
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      const raw = conditionFailureItem(e);
      // dynalite predates ReturnValuesOnConditionCheckFailure: there, and only there, read it.
      return (raw !== undefined ? unmarshallItem(raw) : await this.#item(at)) ?? {};
    }
  }

  async markDispatched(key: string, p: { leaseId: string; nowMs: number; target: string; idempotent: boolean }): Promise<void> {
    await this.#leaseUpdate(
      key,
      p.leaseId,
      'SET idem.dispatchedAt = :at, idem.dispatchTarget = :target, idem.idempotent = :idem',
      {
        ':at': p.nowMs,
        ':target': this.db.redactor.redactText(p.target),
        ':idem': p.idempotent,
      },
      () => this.generic.markDispatched(key, p),
      {},
    );
  }

  async saveSuccess(
    key: string,
    p: { leaseId: string; output: unknown; nowMs: number; ttlSeconds: number; step?: CommittedStep },
  ): Promise<void> {
    const at = parseStepKey(key);
    const expiresAt = Math.floor(p.nowMs / 1000) + p.ttlSeconds;
    const sets = ['idem.#status = :completed', 'idem.#output = :output', 'idem.expiresAt = :exp', 'idem.completedAt = :nowMs'];
    const values: Record<string, unknown> = {
      ':completed': 'COMPLETED',
      ':output': this.db.redactor.redact(p.output) ?? null,
      ':exp': expiresAt,
      ':nowMs': p.nowMs,
    };
    const names: Record<string, string> = { '#output': 'output' };
    const removes: string[] = [];
    if (p.step) {
      // The step record's end, in the same write.
      sets.push('#status = :succeeded', 'endedAt = :ended');
      Object.assign(values, { ':succeeded': 'SUCCEEDED', ':ended': new Date(this.db.clock()).toISOString() });
      if (holdsStepOutput(p.output, p.step.output)) {
        // The committed value carries the step's output: kept there once (the step record reads it
        // from `idem`, see stepRecordOf), not a second copy beside it, which doubled every step
        // item and the commit's request. An output left on the record by an earlier write goes.
        removes.push('#output');
      } else {
        sets.push('#output = :stepOutput');
        values[':stepOutput'] = this.db.redactor.redact(p.step.output) ?? null;
      }
      if (p.step.outputRef !== undefined) {
        sets.push('outputRef = :ref');
        values[':ref'] = p.step.outputRef;
      }
      if (p.step.usage !== undefined) {
        sets.push('#usage = :usage');
        names['#usage'] = 'usage';
        values[':usage'] = p.step.usage;
      }
    }
    await this.#leaseUpdate(
      key,
      p.leaseId,
      `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
      values,
      async () => {
        await this.generic.saveSuccess(key, p);
        if (p.step && at) await this.runs.stepFinished(at.runId, at.stepId, { status: 'SUCCEEDED', ...p.step });
      },
      { '#status': 'status', ...names },
    );
  }

  async releaseLease(key: string, p: { leaseId: string }): Promise<void> {
    await this.#leaseUpdate(key, p.leaseId, 'SET idem.leaseExpiresAt = :zero', { ':zero': 0 }, () => this.generic.releaseLease(key, p), {});
  }

  async deleteRecord(key: string, p: { leaseId?: string }): Promise<void> {
    const at = parseStepKey(key);
    if (!at) return this.generic.deleteRecord(key, p);
    try {
      // The step record stays (it records the attempt); only this key's idempotency record goes.
      await this.db.doc.send(
        new UpdateCommand({
          TableName: this.db.tableName,
          Key: { pk: runPk(at.runId), sk: stepSk(at.stepId) },
          UpdateExpression: 'REMOVE idem',
          ConditionExpression: p.leaseId !== undefined ? 'idem.#key = :key AND idem.leaseId = :lease' : 'idem.#key = :key',
          ExpressionAttributeNames: { '#key': 'key' },
          ExpressionAttributeValues: { ':key': key, ...(p.leaseId !== undefined ? { ':lease': p.leaseId } : {}) },
        }),
      );
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      await this.generic.deleteRecord(key, p);
    }
  }

  async getRecord(key: string): Promise<IdempotencyRecord | undefined> {
    const at = parseStepKey(key);
    if (at) {
      const held = (await this.#item(at))?.idem as Record<string, unknown> | undefined;
      if (held?.key === key) return toRecord(held, at);
    }
    return this.generic.getRecord(key);
  }

  async #item(at: StepKeyParts): Promise<Record<string, unknown> | undefined> {
    const r = await this.db.doc.send(
      new GetCommand({ TableName: this.db.tableName, Key: { pk: runPk(at.runId), sk: stepSk(at.stepId) }, ConsistentRead: true }),
    );
    return r.Item;
  }

  /** An update of this key's record conditional on holding its lease; `elsewhere` when it lives on an IDEM# item. */
  async #leaseUpdate(
    key: string,
    leaseId: string,
    update: string,
    values: Record<string, unknown>,
    elsewhere: () => Promise<void>,
    names: Record<string, string>,
  ): Promise<void> {
    const at = parseStepKey(key);
    if (!at) return elsewhere();
    try {
      await this.db.commands.send(
        new UpdateItemCommand({
          TableName: this.db.tableName,
          Key: marshallItem({ pk: runPk(at.runId), sk: stepSk(at.stepId) }),
          UpdateExpression: update,
          ConditionExpression: 'idem.#key = :key AND idem.leaseId = :lease',
          ExpressionAttributeNames: { '#key': 'key', ...names },
          ExpressionAttributeValues: marshallItem({ ...values, ':key': key, ':lease': leaseId }),
        }),
      );
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      // Not (or no longer) this key's record here: it is on its IDEM# item, or the lease is lost
      // (the IDEM# update then fails with IdempotencyLeaseLostError).
      try {
        await elsewhere();
      } catch (inner) {
        if ((inner as Error).name === 'IdempotencyLeaseLostError') throw new IdempotencyLeaseLostError(key);
        throw inner;
      }
    }
  }
}

/** Whether a committed value (`{ output, … }`, as executeStep commits) holds the step's output itself. */
function holdsStepOutput(committed: unknown, stepOutput: unknown): boolean {
  return (
    typeof committed === 'object' &&
    committed !== null &&
    Object.prototype.hasOwnProperty.call(committed, 'output') &&
    (committed as { output?: unknown }).output === stepOutput
  );
}

/** The record of a step key, from its step record's `idem`. */
function toRecord(idem: Record<string, unknown>, at: StepKeyParts): IdempotencyRecord {
  return idempotencyRecordOf({ ...idem, runId: at.runId, stepId: at.stepId });
}
