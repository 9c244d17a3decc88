import { randomUUID } from 'node:crypto';
import { PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailureItem, couldBeRecordId, isConditionFailure, marshallItem, unmarshallItem, type Db } from './Db.js';
import { GSI_BY_STATUS, GSI_BY_WORKFLOW } from './Tables.js';

/** Run statuses, named as Step Functions names execution statuses. */
export type RunStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';
/** Step statuses. */
export type StepStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'WAITING_APPROVAL';

/** One run's record. */
export interface RunRecord {
  readonly runId: string;
  /** The workflow name (its state machine's). */
  readonly workflow: string;
  /** The workflow's name as its document writes it (`document.name: Document analysis`), when the starter knew it. */
  readonly workflowDisplayName?: string;
  readonly status: RunStatus;
  readonly startedAt: string;
  readonly endedAt?: string;
  readonly idempotencyKey?: string;
  readonly parentRunId?: string;
  /** The version of the workflow's definition the run ran (embedded: WorkflowEntry.version). */
  readonly workflowVersion?: string;
  readonly executionArn?: string;
  /**
   * The process that recorded the run and is starting its execution (`pid@host`, embedded): how
   * a run found with no execution is known as an orphaned start (runs/orphanedStart.ts).
   */
  readonly startedBy?: string;
  /**
   * The approval policy the run is held to, as its starter resolved it (embedded: the workflow's
   * policy files or STEPFORGE_POLICY): the tool handler gates the run's calls by these rules, not
   * by its own process's. Absent: the runtime's configured policy (on AWS, STEPFORGE_POLICY).
   */
  readonly policy?: {
    readonly sources: readonly { readonly origin: string; readonly rules: number }[];
    readonly rules: readonly unknown[];
  };
  readonly input?: unknown;
  readonly output?: unknown;
  readonly error?: { readonly name: string; readonly message: string };
}

/** One step execution's record. */
export interface StepRecord {
  readonly runId: string;
  readonly stepId: string;
  readonly status: StepStatus;
  readonly attempts: number;
  readonly startedAt: string;
  readonly endedAt?: string;
  readonly output?: unknown;
  /** Set when the output was too large to keep inline (see BlobStore). */
  readonly outputRef?: string;
  readonly usage?: unknown;
  readonly error?: { readonly name: string; readonly message: string };
}

/** An audit event on a run (refused tool calls, policy decisions, approvals). */
export interface RunEvent {
  readonly runId: string;
  readonly stepId?: string;
  readonly type: string;
  readonly at: string;
  readonly detail?: unknown;
}

/** The partition key of a run's items (run record, step records, events). */
/** A step instance's status and the state of its call (its idempotency record), as `runs resolve` reads them. */
export interface StepCall {
  readonly stepId: string;
  readonly status?: StepStatus;
  readonly call?: { readonly key: string; readonly status: string; readonly dispatched: boolean; readonly dispatchTarget?: string };
}

export const runPk = (runId: string) => `RUN#${runId}`;
/** The sort key of a step instance's record. */
/** The sort key prefix of a run's step records. */
export const STEP_PREFIX = 'STEP#';
export const stepSk = (stepId: string) => `${STEP_PREFIX}${stepId}`;
const RUN_SK = '#RUN';

/** Runs, steps and run events in the runtime table. Every write is redacted first. */
export class RunStore {
  constructor(private readonly db: Db) {}

  #iso(): string {
    return new Date(this.db.clock()).toISOString();
  }

  /**
   * Starts a run. With an idempotency key, one conditional put claims the key; when the key is
   * taken the existing run is returned with `reused: true` (same key → same run).
   *
   * `executionArn` may be given as what it is for a run id: a key claimed by a start that ended
   * before writing its run makes this start write that run, under the key's run id rather than
   * `runId`, and its execution must then be named after the id the record carries, or whoever
   * follows the run would look for an execution that is never started.
   */
  async startRun(p: {
    workflow: string;
    workflowDisplayName?: string;
    runId?: string;
    idempotencyKey?: string;
    parentRunId?: string;
    workflowVersion?: string;
    executionArn?: string | ((runId: string) => string);
    startedBy?: string;
    policy?: RunRecord['policy'];
    input?: unknown;
    /** Called once this start has claimed the key, before it writes the run (the durability tests' crash point). */
    keyClaimed?: (runId: string) => void;
  }): Promise<{ run: RunRecord; reused: boolean }> {
    let runId = p.runId ?? randomUUID();
    if (p.idempotencyKey !== undefined) {
      try {
        await this.db.doc.send(
          new PutCommand({
            TableName: this.db.tableName,
            Item: { pk: `RUNKEY#${p.idempotencyKey}`, sk: 'RUNKEY', runId, workflow: p.workflow },
            ConditionExpression: 'attribute_not_exists(pk)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        p.keyClaimed?.(runId);
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        const raw = conditionFailureItem(e);
        const old = raw
          ? unmarshallItem(raw)
          : (
              await this.db.doc.send(
                new GetCommand({
                  TableName: this.db.tableName,
                  Key: { pk: `RUNKEY#${p.idempotencyKey}`, sk: 'RUNKEY' },
                  ConsistentRead: true,
                }),
              )
            ).Item;
        runId = String(old?.runId);
        const existing = await this.getRun(runId);
        if (existing) return { run: existing, reused: true };
        // The key was claimed but the run record never written (crash in between): write it now.
      }
    }
    const startedAt = this.#iso();
    const executionArn = typeof p.executionArn === 'function' ? p.executionArn(runId) : p.executionArn;
    const run: RunRecord = {
      runId,
      workflow: p.workflow,
      status: 'RUNNING',
      startedAt,
      ...(p.workflowDisplayName !== undefined ? { workflowDisplayName: p.workflowDisplayName } : {}),
      ...(p.idempotencyKey !== undefined ? { idempotencyKey: p.idempotencyKey } : {}),
      ...(p.parentRunId !== undefined ? { parentRunId: p.parentRunId } : {}),
      ...(p.workflowVersion !== undefined ? { workflowVersion: p.workflowVersion } : {}),
      ...(executionArn !== undefined ? { executionArn } : {}),
      ...(p.startedBy !== undefined ? { startedBy: p.startedBy } : {}),
      ...(p.policy !== undefined ? { policy: p.policy } : {}),
      ...(p.input !== undefined ? { input: this.db.redactor.redact(p.input) } : {}),
    };
    try {
      await this.db.commands.send(
        new PutItemCommand({
          TableName: this.db.tableName,
          Item: marshallItem({ pk: runPk(runId), sk: RUN_SK, type: 'run', ...run, ...indexKeys(run) }),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      const existing = await this.getRun(runId);
      if (existing) return { run: existing, reused: true };
      throw e;
    }
    return { run, reused: false };
  }

  /**
   * Moves a run to a final (or any) status, with its output or error, and returns the record as
   * written. `startedAt` (the run's, for the by-status index key) saves a read when the caller has it.
   */
  async finishRun(
    runId: string,
    p: {
      status: RunStatus;
      output?: unknown;
      error?: { name: string; message: string };
      executionArn?: string;
      startedAt?: string;
      endedAt?: string;
    },
  ): Promise<RunRecord> {
    const startedAt = p.startedAt ?? (await this.getRun(runId))?.startedAt ?? this.#iso();
    const sets = ['#status = :status', 'gsi2pk = :g2', 'gsi2sk = :g2s'];
    const values: Record<string, unknown> = { ':status': p.status, ':g2': `RUNSTATUS#${p.status}`, ':g2s': `${startedAt}#${runId}` };
    if (p.status !== 'RUNNING') {
      sets.push('endedAt = :ended');
      values[':ended'] = p.endedAt ?? this.#iso();
    }
    if (p.output !== undefined) {
      sets.push('#output = :output');
      values[':output'] = this.db.redactor.redact(p.output);
    }
    if (p.error !== undefined) {
      sets.push('#error = :error');
      values[':error'] = this.db.redactor.redact(p.error);
    }
    if (p.executionArn !== undefined) {
      sets.push('executionArn = :arn');
      values[':arn'] = p.executionArn;
    }
    const r = await this.db.commands.send(
      new UpdateItemCommand({
        TableName: this.db.tableName,
        Key: marshallItem({ pk: runPk(runId), sk: RUN_SK }),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: {
          '#status': 'status',
          ...(p.output !== undefined ? { '#output': 'output' } : {}),
          ...(p.error !== undefined ? { '#error': 'error' } : {}),
        },
        ExpressionAttributeValues: marshallItem(values),
        // The record as written comes back with the update, so nobody has to read it again.
        ReturnValues: 'ALL_NEW',
      }),
    );
    return stripKeys(unmarshallItem(r.Attributes ?? {})) as unknown as RunRecord;
  }

  /**
   * Takes over an orphaned start (runs/orphanedStart.ts) found as `found`: one conditional update,
   * so of two finders one wins. `to: 'start'` signs the run as `starter`'s, RUNNING again (a run
   * failed for an interrupted start, nothing of which ran), for it to start the execution;
   * `to: 'fail'` fails it with `error`. Undefined when the run is no longer as found (another
   * finder, or its starter, got there first).
   */
  async takeOverStart(
    found: RunRecord,
    p: { to: 'start'; starter: string } | { to: 'fail'; error: { name: string; message: string } },
  ): Promise<RunRecord | undefined> {
    const status: RunStatus = p.to === 'start' ? 'RUNNING' : 'FAILED';
    const names: Record<string, string> = { '#status': 'status', '#error': 'error' };
    const values: Record<string, unknown> = {
      ':status': status,
      ':was': found.status,
      ':g2': `RUNSTATUS#${status}`,
      ':g2s': `${found.startedAt}#${found.runId}`,
    };
    const conditions = ['#status = :was'];
    if (found.startedBy !== undefined) {
      conditions.push('startedBy = :by');
      values[':by'] = found.startedBy;
    } else conditions.push('attribute_not_exists(startedBy)');
    if (found.status === 'FAILED') {
      conditions.push('#error.#name = :notStarted');
      names['#name'] = 'name';
      values[':notStarted'] = found.error?.name;
    }
    const update =
      p.to === 'start'
        ? ((values[':starter'] = p.starter),
          'SET #status = :status, gsi2pk = :g2, gsi2sk = :g2s, startedBy = :starter REMOVE endedAt, #error')
        : ((values[':ended'] = this.#iso()),
          (values[':error'] = this.db.redactor.redact(p.error)),
          'SET #status = :status, gsi2pk = :g2, gsi2sk = :g2s, endedAt = :ended, #error = :error');
    try {
      const r = await this.db.commands.send(
        new UpdateItemCommand({
          TableName: this.db.tableName,
          Key: marshallItem({ pk: runPk(found.runId), sk: RUN_SK }),
          UpdateExpression: update,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: marshallItem(values),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return stripKeys(unmarshallItem(r.Attributes ?? {})) as unknown as RunRecord;
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    if (!couldBeRecordId(runId)) return undefined;
    const r = await this.db.doc.send(
      new GetCommand({ TableName: this.db.tableName, Key: { pk: runPk(runId), sk: RUN_SK }, ConsistentRead: true }),
    );
    return r.Item ? (stripKeys(r.Item) as unknown as RunRecord) : undefined;
  }

  /** Newest first. `workflow` uses the by-workflow index (status filtered); `status` alone the by-status index. */
  async listRuns(p: { workflow?: string; status?: RunStatus; limit?: number } = {}): Promise<RunRecord[]> {
    const limit = p.limit ?? 50;
    let input: ConstructorParameters<typeof QueryCommand>[0];
    if (p.workflow !== undefined) {
      input = {
        TableName: this.db.tableName,
        IndexName: GSI_BY_WORKFLOW,
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': `WF#${p.workflow}` },
        ScanIndexForward: false,
      };
      if (p.status !== undefined) {
        input.FilterExpression = '#status = :status';
        input.ExpressionAttributeNames = { '#status': 'status' };
        input.ExpressionAttributeValues = { ...input.ExpressionAttributeValues, ':status': p.status };
      }
    } else if (p.status !== undefined) {
      input = {
        TableName: this.db.tableName,
        IndexName: GSI_BY_STATUS,
        KeyConditionExpression: 'gsi2pk = :pk',
        ExpressionAttributeValues: { ':pk': `RUNSTATUS#${p.status}` },
        ScanIndexForward: false,
      };
    } else {
      // All runs: gsi1 has one partition per workflow, so query the "all runs" partition kept in gsi2 per status.
      const all = await Promise.all(
        (['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'] as const).map((s) => this.listRuns({ status: s, limit })),
      );
      return all
        .flat()
        .sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0))
        .slice(0, limit);
    }
    const out: RunRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const r = await this.db.doc.send(new QueryCommand({ ...input, ...(start ? { ExclusiveStartKey: start } : {}) }));
      for (const it of r.Items ?? []) out.push(stripKeys(it) as unknown as RunRecord);
      start = r.LastEvaluatedKey;
    } while (start && out.length < limit);
    return out.slice(0, limit);
  }

  /** Marks a step RUNNING and counts the attempt. */
  async stepStarted(runId: string, stepId: string): Promise<void> {
    await this.db.doc.send(
      new UpdateCommand({
        TableName: this.db.tableName,
        Key: { pk: runPk(runId), sk: stepSk(stepId) },
        UpdateExpression:
          'SET #status = :s, startedAt = if_not_exists(startedAt, :now), runId = :run, stepId = :step, #type = :type ADD attempts :one',
        ExpressionAttributeNames: { '#status': 'status', '#type': 'type' },
        ExpressionAttributeValues: { ':s': 'RUNNING', ':now': this.#iso(), ':run': runId, ':step': stepId, ':one': 1, ':type': 'step' },
      }),
    );
  }

  /** Records a step's end: output (or its reference), usage, or error; `countAttempt` when no claim counted it. */
  async stepFinished(
    runId: string,
    stepId: string,
    p: {
      status: StepStatus;
      output?: unknown;
      outputRef?: string;
      usage?: unknown;
      error?: { name: string; message: string };
      countAttempt?: boolean;
    },
  ): Promise<void> {
    const sets = [
      '#status = :s',
      'endedAt = :now',
      'runId = :run',
      'stepId = :step',
      '#type = :type',
      'startedAt = if_not_exists(startedAt, :now)',
    ];
    const names: Record<string, string> = { '#status': 'status', '#type': 'type' };
    const values: Record<string, unknown> = { ':s': p.status, ':now': this.#iso(), ':run': runId, ':step': stepId, ':type': 'step' };
    if (p.output !== undefined) {
      sets.push('#output = :output');
      names['#output'] = 'output';
      values[':output'] = this.db.redactor.redact(p.output);
    }
    if (p.outputRef !== undefined) {
      sets.push('outputRef = :ref');
      values[':ref'] = p.outputRef;
    }
    if (p.usage !== undefined) {
      sets.push('#usage = :usage');
      names['#usage'] = 'usage';
      values[':usage'] = p.usage;
    }
    if (p.error !== undefined) {
      sets.push('#error = :error');
      names['#error'] = 'error';
      values[':error'] = this.db.redactor.redact(p.error);
    }
    if (p.countAttempt) values[':one'] = 1;
    await this.db.doc.send(
      new UpdateCommand({
        TableName: this.db.tableName,
        Key: { pk: runPk(runId), sk: stepSk(stepId) },
        UpdateExpression: `SET ${sets.join(', ')}${p.countAttempt ? ' ADD attempts :one' : ''}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  }

  async getStep(runId: string, stepId: string): Promise<StepRecord | undefined> {
    const r = await this.db.doc.send(
      new GetCommand({ TableName: this.db.tableName, Key: { pk: runPk(runId), sk: stepSk(stepId) }, ConsistentRead: true }),
    );
    return r.Item && r.Item.status !== undefined ? stepRecordOf(r.Item) : undefined;
  }

  async listSteps(runId: string): Promise<StepRecord[]> {
    // A fork's carried-over results sit on step items with no status until the step is reached.
    return (await this.#queryPrefix(runId, STEP_PREFIX, (i) => i)).filter((i) => i.status !== undefined).map(stepRecordOf);
  }

  /** Appends an audit event (refusals, policy decisions, approvals). */
  async recordEvent(e: { runId: string; stepId?: string; type: string; detail?: unknown }): Promise<void> {
    const at = this.#iso();
    await this.db.doc.send(
      new PutCommand({
        TableName: this.db.tableName,
        Item: this.db.redactor.redact({
          pk: runPk(e.runId),
          sk: `EVENT#${at}#${randomUUID()}`,
          eventType: e.type,
          runId: e.runId,
          stepId: e.stepId,
          at,
          detail: e.detail,
        }),
      }),
    );
  }

  async listEvents(runId: string): Promise<RunEvent[]> {
    return (await this.#queryPrefix(runId, 'EVENT#')).map((i) => ({
      runId: String(i.runId),
      ...(i.stepId ? { stepId: String(i.stepId) } : {}),
      type: String(i.eventType),
      at: String(i.at),
      detail: i.detail,
    }));
  }

  /**
   * Every step instance of a run with its status and the state of its call's idempotency record
   * (kept on the step record), including instances that have a record but no status yet.
   */
  async listStepCalls(runId: string): Promise<StepCall[]> {
    return (await this.#queryPrefix(runId, STEP_PREFIX, (i) => i)).map((item) => {
      const idem = item.idem as { key?: string; status?: string; dispatchedAt?: unknown; dispatchTarget?: string } | undefined;
      return {
        stepId: String(item.sk).slice(STEP_PREFIX.length),
        ...(typeof item.status === 'string' ? { status: item.status as StepStatus } : {}),
        ...(idem?.key !== undefined
          ? {
              call: {
                key: idem.key,
                status: idem.status ?? '',
                dispatched: idem.dispatchedAt !== undefined,
                ...(idem.dispatchTarget !== undefined ? { dispatchTarget: idem.dispatchTarget } : {}),
              },
            }
          : {}),
      };
    });
  }

  /** Removes the error a step record keeps (its failure is no longer the step's state). */
  async clearStepError(runId: string, stepId: string): Promise<void> {
    await this.db.doc.send(
      new UpdateCommand({
        TableName: this.db.tableName,
        Key: { pk: runPk(runId), sk: stepSk(stepId) },
        UpdateExpression: 'REMOVE #error',
        ExpressionAttributeNames: { '#error': 'error' },
      }),
    );
  }

  async #queryPrefix(
    runId: string,
    prefix: string,
    view: (item: Record<string, unknown>) => Record<string, unknown> = stripKeys,
  ): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const r = await this.db.doc.send(
        new QueryCommand({
          TableName: this.db.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
          ExpressionAttributeValues: { ':pk': runPk(runId), ':p': prefix },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const it of r.Items ?? []) out.push(view(it));
      start = r.LastEvaluatedKey;
    } while (start);
    return out;
  }
}

function indexKeys(run: RunRecord): Record<string, string> {
  return {
    gsi1pk: `WF#${run.workflow}`,
    gsi1sk: `${run.startedAt}#${run.runId}`,
    gsi2pk: `RUNSTATUS#${run.status}`,
    gsi2sk: `${run.startedAt}#${run.runId}`,
  };
}

/**
 * A step record from its item. A step that succeeded through the runtime's layer keeps its output
 * once, in the committed value of its idempotency record (`idem.output.output`, see
 * StepRecordPersistenceLayer.saveSuccess); an `output` of the step record's own (a reused result, a
 * record written before, or another key's commit on the same step instance) comes first.
 */
export function stepRecordOf(item: Record<string, unknown>): StepRecord {
  const step = stripKeys(item);
  if (step.status === 'SUCCEEDED' && !('output' in step)) {
    const idem = item.idem as { status?: unknown; output?: unknown } | undefined;
    const committed = idem?.status === 'COMPLETED' ? idem.output : undefined;
    if (typeof committed === 'object' && committed !== null && 'output' in committed)
      step.output = (committed as { output: unknown }).output;
  }
  return step as unknown as StepRecord;
}

/** Drops the table's key attributes (and a step's idempotency record) from an item. */
export function stripKeys(item: Record<string, unknown>): Record<string, unknown> {
  const { pk: _pk, sk: _sk, gsi1pk: _a, gsi1sk: _b, gsi2pk: _c, gsi2sk: _d, type: _t, ttl: _ttl, idem: _idem, ...rest } = item;
  return rest;
}
