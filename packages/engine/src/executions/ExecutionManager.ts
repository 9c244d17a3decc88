import { randomUUID } from 'node:crypto';
import type {
  AslDefinition,
  Checkpoint,
  Clock,
  ContextObject,
  DefinitionError,
  ExecuteOptions,
  ExecutionResult,
  HistoryEvent,
  TaskInvoker,
} from '../interpreter/types.js';
import type { MapRunChild, MapRunChildSink } from '../interpreter/MapRun.js';
import { createTaskInvoker, type ComposedTaskInvoker } from '../resources/createTaskInvoker.js';
import type { ServiceEndpointOptions } from '../resources/SqsResource.js';
import type { ChildExecutionDescription, ChildExecutions } from '../resources/StartExecutionResource.js';
import { TaskTokenRegistry } from '../resources/TaskTokenRegistry.js';
import {
  checkExecutionArn,
  checkName,
  checkStateMachineArn,
  executionArn,
  parseStateMachineArn,
  stateMachineArn,
  type ArnScope,
} from './arns.js';
import { collectTaskResources, markValidDefinition } from './definitionText.js';
import { substitutePlaceholders } from '../substitutePlaceholders.js';
import type { ExecutionRecord, ExecutionStore, StateMachineRecord } from './ExecutionStore.js';
import { MapRuns } from './MapRuns.js';
import { MemoryExecutionStore } from './MemoryExecutionStore.js';
import { SfnApiError } from './SfnApiError.js';
import {
  aliasArn,
  checkRouting,
  checkTags,
  createAlias,
  deleteAlias,
  deleteVersion,
  findVersion,
  publishVersion,
  requireAlias,
  routeAlias,
  tagRecord,
  untagRecord,
  updateAlias,
  versionArn,
} from './stateMachineVersions.js';
import { testState } from './testState.js';

/** The interpreter's entry point (injected so the manager can be tested and benchmarked on its own). */
export type ExecuteFn = (definition: AslDefinition, input: unknown, options: ExecuteOptions) => Promise<ExecutionResult>;
/** The interpreter's pre-run check. */
export type ValidateFn = (definition: AslDefinition) => readonly DefinitionError[];

/** Options of the executions manager. */
export interface ExecutionManagerOptions {
  /** Runs ASL (the interpreter's executeStateMachine). */
  readonly execute: ExecuteFn;
  /** Rejects bad definitions before they are stored (the interpreter's validateDefinition). */
  readonly validate?: ValidateFn;
  /** Default: in memory. A DirectoryExecutionStore makes Standard executions survive restarts. */
  readonly store?: ExecutionStore;
  /** Lambda resources (function ARNs, lambda:invoke). */
  readonly lambda?: TaskInvoker;
  /** `${Name}` → value, applied to every definition's text (CDK DefinitionSubstitutions). */
  readonly substitutions?: Readonly<Record<string, string>>;
  readonly sqs?: ServiceEndpointOptions | false;
  readonly dynamodb?: ServiceEndpointOptions | false;
  readonly clock?: Clock;
  readonly partition?: string;
  readonly region?: string;
  readonly account?: string;
  /** The draw that splits an alias's executions between its versions (default Math.random). */
  readonly random?: () => number;
}

/** What StartExecution runs: a state machine's current revision, or a version (directly or through an alias). */
interface StartTarget {
  readonly sm: StateMachineRecord;
  readonly definition: string;
  readonly roleArn: string;
  readonly stateMachineVersionArn?: string;
  readonly stateMachineAliasArn?: string;
}

/** API-shaped values: dates are epoch milliseconds (the server turns them into seconds). */
type Json = Record<string, unknown>;

interface Live {
  record: ExecutionRecord;
  controller: AbortController;
  done: Promise<void>;
  /** Events not yet handed to a durable store (flushed at each checkpoint). */
  pending: HistoryEvent[];
  lastEventId: number;
}

const TERMINAL_REDRIVABLE = new Set(['FAILED', 'TIMED_OUT', 'ABORTED']);
const MAX_INPUT_BYTES = 256 * 1024;

/**
 * Standard and Express executions over the interpreter: state machines, name idempotency,
 * histories, stop, redrive, task tokens, child executions, and persistence through an
 * ExecutionStore so that a restarted manager resumes unfinished Standard executions from their
 * last completed transition. Its methods take and return the Step Functions API shapes.
 */
export class ExecutionManager implements ChildExecutions {
  readonly tokens: TaskTokenRegistry;
  readonly invoker: ComposedTaskInvoker;
  private readonly store: ExecutionStore;
  private readonly scope: ArnScope;
  private readonly machines = new Map<string, StateMachineRecord>();
  private readonly executions = new Map<string, ExecutionRecord>();
  private readonly live = new Map<string, Live>();
  /** Parsed definitions by text: the interpreter never changes one, and validates each object once. */
  private readonly definitions = new Map<string, AslDefinition>();
  private readonly mapRuns: MapRuns;
  private readonly childDefinitions = new WeakMap<object, string>();
  /** Events of running Map Run child executions, handed to the store when each ends. */
  private readonly childEvents = new Map<string, HistoryEvent[]>();
  private closing = false;

  constructor(private readonly options: ExecutionManagerOptions) {
    this.store = options.store ?? new MemoryExecutionStore();
    this.scope = {
      partition: options.partition ?? 'aws',
      region: options.region ?? 'us-east-1',
      account: options.account ?? '123456789012',
    };
    this.mapRuns = new MapRuns({
      record: (arn) => this.executions.get(arn),
      save: (record, persist) => {
        // A shutdown aborts the Map Runs it interrupts; their execution resumes next time, as a new Map Run.
        if (this.closing) return;
        this.executions.set(record.executionArn, record);
        if (persist) this.store.putExecution(record);
      },
      children: (mapRunArn) => [...this.executions.values()].filter((e) => e.mapRunArn === mapRunArn),
      childStarted: (child) => this.childStarted(child),
    });
    this.tokens = new TaskTokenRegistry((token) => {
      const arn = executionOfToken(token);
      return arn !== undefined && this.live.has(arn);
    });
    this.invoker = createTaskInvoker({
      tokens: this.tokens,
      executions: this,
      ...(options.lambda ? { lambda: options.lambda } : {}),
      ...(options.sqs !== undefined ? { sqs: options.sqs } : {}),
      ...(options.dynamodb !== undefined ? { dynamodb: options.dynamodb } : {}),
    });
  }

  /** Loads the store and resumes every Standard execution that was RUNNING when the last process ended. */
  recover(): number {
    this.load();
    return this.resumeUnfinished();
  }

  /** Loads state machines and executions from the store (nothing runs yet). */
  load(): void {
    const snap = this.store.load();
    for (const m of snap.stateMachines) this.machines.set(m.stateMachineArn, m);
    for (const e of snap.executions) {
      this.executions.set(e.executionArn, e);
      this.mapRuns.load(e);
    }
  }

  /**
   * Resumes every loaded Standard execution that is RUNNING but not running in this process, from
   * its last checkpoint. Call it once the Lambda handlers it may need are in place.
   */
  resumeUnfinished(): number {
    let resumed = 0;
    for (const e of this.executions.values()) {
      if (e.status !== 'RUNNING' || e.type !== 'STANDARD' || this.live.has(e.executionArn)) continue;
      // A Map Run's child ended with the process that ran it; its parent runs the Map state again.
      if (e.mapRunArn !== undefined) {
        if (!this.childEvents.has(e.executionArn))
          this.abortDormant(e, {
            error: 'States.Aborted',
            cause: 'The engine stopped while this child execution ran; its parent execution runs its Map state again.',
          });
        continue;
      }
      let definition: AslDefinition;
      try {
        definition = JSON.parse(e.definition) as AslDefinition;
      } catch {
        continue;
      }
      const cp = this.store.readCheckpoint(e.executionArn) ?? {
        // Crashed before the first transition completed: start over at StartAt, after ExecutionStarted.
        stateName: String(definition.StartAt),
        input: JSON.parse(e.input) as unknown,
        variables: {},
        eventCounter: 1,
        previousEventId: 0,
        transitions: 0,
      };
      this.store.truncateEvents(e.executionArn, cp.eventCounter);
      const record = this.mapRuns.withStaleRunsAborted(e, Date.now());
      if (record !== e) {
        this.executions.set(record.executionArn, record);
        this.store.putExecution(record);
      }
      this.launch(record, definition, { resumeFrom: cp });
      resumed++;
    }
    return resumed;
  }

  // ---------------------------------------------------------------- state machines

  /** CreateStateMachine. Same name, definition, role and type again returns the existing one. */
  createStateMachine(req: Json): Json {
    const name = checkName(req.name, 'state machine');
    const type = checkType(req.type);
    const definition = this.checkDefinition(req.definition);
    const roleArn = checkRole(req.roleArn, this.scope);
    const publish = checkPublish(req);
    const tags = checkTags(req.tags);
    const arn = stateMachineArn(this.scope, name);
    const existing = this.machines.get(arn);
    if (existing) {
      if (existing.definition === definition && existing.roleArn === roleArn && existing.type === type) {
        return {
          stateMachineArn: arn,
          creationDate: existing.creationDate,
          ...(publish ? this.publish(existing, req.versionDescription) : {}),
        };
      }
      throw new SfnApiError('StateMachineAlreadyExists', `State Machine Already Exists: '${arn}'`);
    }
    const record: StateMachineRecord = {
      stateMachineArn: arn,
      name,
      type,
      definition,
      roleArn,
      creationDate: Date.now(),
      revisionId: randomUUID(),
      ...(typeof req.description === 'string' ? { description: req.description } : {}),
      ...(req.loggingConfiguration !== undefined ? { loggingConfiguration: req.loggingConfiguration } : {}),
      ...(req.tracingConfiguration !== undefined ? { tracingConfiguration: req.tracingConfiguration } : {}),
    };
    const tagged = tags.length > 0 ? tagRecord(record, tags) : record;
    if (publish) return { stateMachineArn: arn, creationDate: record.creationDate, ...this.publish(tagged, req.versionDescription) };
    this.putMachine(tagged);
    return { stateMachineArn: arn, creationDate: record.creationDate };
  }

  /** UpdateStateMachine: running executions keep the definition they started with. */
  updateStateMachine(req: Json): Json {
    const sm = this.machine(req.stateMachineArn);
    const publish = checkPublish(req);
    if (
      req.definition === undefined &&
      req.roleArn === undefined &&
      req.loggingConfiguration === undefined &&
      req.tracingConfiguration === undefined
    ) {
      throw new SfnApiError(
        'MissingRequiredParameter',
        'Either the definition, the roleArn, the loggingConfiguration or the tracingConfiguration must be specified.',
      );
    }
    const updated: StateMachineRecord = {
      ...sm,
      ...(req.definition !== undefined ? { definition: this.checkDefinition(req.definition) } : {}),
      ...(req.roleArn !== undefined ? { roleArn: checkRole(req.roleArn, this.scope) } : {}),
      ...(req.loggingConfiguration !== undefined ? { loggingConfiguration: req.loggingConfiguration } : {}),
      ...(req.tracingConfiguration !== undefined ? { tracingConfiguration: req.tracingConfiguration } : {}),
      updateDate: Date.now(),
      revisionId: randomUUID(),
    };
    if (publish)
      return { updateDate: updated.updateDate, revisionId: updated.revisionId, ...this.publish(updated, req.versionDescription) };
    this.putMachine(updated);
    return { updateDate: updated.updateDate, revisionId: updated.revisionId };
  }

  /** DescribeStateMachine; a version ARN describes that version (its definition, revision and description). */
  describeStateMachine(req: Json): Json {
    const parts = parseStateMachineArn(req.stateMachineArn);
    if (parts.alias !== undefined) {
      throw new SfnApiError(
        'InvalidArn',
        `Invalid Arn: '${String(req.stateMachineArn)}' is an alias ARN; describe an alias with DescribeStateMachineAlias`,
      );
    }
    const sm = this.machine(parts.stateMachineArn);
    if (parts.version !== undefined) {
      const v = findVersion(sm, parts.version);
      if (!v) throw new SfnApiError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${String(req.stateMachineArn)}'`);
      return {
        stateMachineArn: versionArn(sm, v.version),
        name: sm.name,
        status: 'ACTIVE',
        definition: v.definition,
        roleArn: v.roleArn,
        type: sm.type,
        creationDate: v.creationDate,
        loggingConfiguration: v.loggingConfiguration ?? { level: 'OFF', includeExecutionData: false },
        tracingConfiguration: v.tracingConfiguration ?? { enabled: false },
        revisionId: v.revisionId,
        ...(v.description !== undefined ? { description: v.description } : {}),
      };
    }
    return {
      stateMachineArn: sm.stateMachineArn,
      name: sm.name,
      status: 'ACTIVE',
      definition: sm.definition,
      roleArn: sm.roleArn,
      type: sm.type,
      creationDate: sm.creationDate,
      loggingConfiguration: sm.loggingConfiguration ?? { level: 'OFF', includeExecutionData: false },
      tracingConfiguration: sm.tracingConfiguration ?? { enabled: false },
      revisionId: sm.revisionId,
      ...(sm.description !== undefined ? { description: sm.description } : {}),
    };
  }

  /** DescribeStateMachineForExecution: the state machine as the execution started it. */
  describeStateMachineForExecution(req: Json): Json {
    const e = this.execution(req.executionArn);
    const sm = this.machines.get(e.stateMachineArn);
    const version =
      sm && e.stateMachineVersionArn !== undefined
        ? findVersion(sm, Number(e.stateMachineVersionArn.slice(e.stateMachineVersionArn.lastIndexOf(':') + 1)))
        : undefined;
    if (version) {
      return {
        stateMachineArn: e.stateMachineArn,
        name: e.stateMachineName,
        definition: e.definition,
        roleArn: e.roleArn,
        updateDate: version.creationDate,
        loggingConfiguration: version.loggingConfiguration ?? { level: 'OFF', includeExecutionData: false },
        tracingConfiguration: version.tracingConfiguration ?? { enabled: false },
        revisionId: version.revisionId,
      };
    }
    return {
      stateMachineArn: e.stateMachineArn,
      name: e.stateMachineName,
      definition: e.definition,
      roleArn: e.roleArn,
      ...(e.mapRunArn !== undefined
        ? { mapRunArn: e.mapRunArn, label: e.stateMachineName.slice(e.stateMachineName.lastIndexOf('/') + 1) }
        : {}),
      updateDate: sm?.updateDate ?? sm?.creationDate ?? e.startDate,
      loggingConfiguration: sm?.loggingConfiguration ?? { level: 'OFF', includeExecutionData: false },
      tracingConfiguration: sm?.tracingConfiguration ?? { enabled: false },
      ...(sm ? { revisionId: sm.revisionId } : {}),
    };
  }

  /** ValidateStateMachineDefinition: the reasons CreateStateMachine would refuse, as diagnostics. */
  validateStateMachineDefinition(req: Json): Json {
    try {
      this.checkDefinition(req.definition);
      return { result: 'OK', diagnostics: [], truncated: false };
    } catch (e) {
      if ((e as { type?: string }).type !== 'InvalidDefinition') throw e;
      const diagnostics = this.definitionProblems(req.definition).map((p) => ({
        severity: 'ERROR',
        code: p.code,
        message: p.message,
        ...(p.path ? { location: p.path } : {}),
      }));
      return { result: 'FAIL', diagnostics, truncated: false };
    }
  }

  /** ListStateMachines (paged). */
  listStateMachines(req: Json): Json {
    const all = [...this.machines.values()].sort((a, b) => a.creationDate - b.creationDate || a.name.localeCompare(b.name));
    const { items, nextToken } = page(all, req, 'ListStateMachines');
    return {
      stateMachines: items.map((m) => ({ stateMachineArn: m.stateMachineArn, name: m.name, type: m.type, creationDate: m.creationDate })),
      ...(nextToken ? { nextToken } : {}),
    };
  }

  /** DeleteStateMachine: running executions continue; the machine is gone at once. */
  deleteStateMachine(req: Json): Json {
    // Its versions and aliases live in its record and go with it, as on AWS.
    const arn = checkStateMachineArn(req.stateMachineArn);
    this.machines.delete(arn);
    this.store.deleteStateMachine(arn);
    return {};
  }

  // ---------------------------------------------------------------- versions, aliases, tags

  /** PublishStateMachineVersion. */
  publishStateMachineVersion(req: Json): Json {
    const sm = this.machine(req.stateMachineArn);
    const { record, version } = publishVersion(sm, { revisionId: req.revisionId, description: req.description }, Date.now());
    if (record !== sm) this.putMachine(record);
    return { stateMachineVersionArn: versionArn(sm, version.version), creationDate: version.creationDate };
  }

  /** ListStateMachineVersions: newest first (paged). */
  listStateMachineVersions(req: Json): Json {
    const sm = this.machine(req.stateMachineArn);
    const all = [...(sm.versions ?? [])].reverse();
    const { items, nextToken } = page(all, req, `ListStateMachineVersions:${sm.stateMachineArn}`);
    return {
      stateMachineVersions: items.map((v) => ({ stateMachineVersionArn: versionArn(sm, v.version), creationDate: v.creationDate })),
      ...(nextToken ? { nextToken } : {}),
    };
  }

  /** DeleteStateMachineVersion: refused while an alias routes to the version. */
  deleteStateMachineVersion(req: Json): Json {
    const parts = parseStateMachineArn(req.stateMachineVersionArn, 'stateMachineVersionArn');
    if (parts.version === undefined)
      throw new SfnApiError(
        'InvalidArn',
        `Invalid Arn: '${String(req.stateMachineVersionArn)}' is not a version ARN (arn:…:stateMachine:<name>:<version>)`,
      );
    const sm = this.machines.get(parts.stateMachineArn);
    if (!sm) return {};
    const record = deleteVersion(sm, parts.version);
    if (record !== sm) this.putMachine(record);
    return {};
  }

  /** CreateStateMachineAlias: the state machine is the one whose versions the routing names. */
  createStateMachineAlias(req: Json): Json {
    const { sm, routes } = checkRouting(req.routingConfiguration, (arn) => this.machines.get(arn));
    const { record, alias } = createAlias(sm, { name: req.name, description: req.description }, routes, Date.now());
    if (record !== sm) this.putMachine(record);
    return { stateMachineAliasArn: aliasArn(sm, alias.name), creationDate: alias.creationDate };
  }

  /** DescribeStateMachineAlias. */
  describeStateMachineAlias(req: Json): Json {
    const { sm, name } = this.aliasOf(req.stateMachineAliasArn);
    const a = requireAlias(sm, name);
    return {
      stateMachineAliasArn: aliasArn(sm, a.name),
      name: a.name,
      ...(a.description !== undefined ? { description: a.description } : {}),
      routingConfiguration: a.routingConfiguration,
      creationDate: a.creationDate,
      ...(a.updateDate !== undefined ? { updateDate: a.updateDate } : {}),
    };
  }

  /** UpdateStateMachineAlias. */
  updateStateMachineAlias(req: Json): Json {
    const { sm, name } = this.aliasOf(req.stateMachineAliasArn);
    requireAlias(sm, name);
    let routes;
    if (req.routingConfiguration !== undefined) {
      const routing = checkRouting(req.routingConfiguration, (arn) => this.machines.get(arn));
      if (routing.sm.stateMachineArn !== sm.stateMachineArn) {
        throw new SfnApiError(
          'ValidationException',
          `routingConfiguration: the alias '${String(req.stateMachineAliasArn)}' can route only to versions of its own state machine '${sm.stateMachineArn}'`,
        );
      }
      routes = routing.routes;
    }
    const { record, alias } = updateAlias(sm, name, { description: req.description }, routes, Date.now());
    this.putMachine(record);
    return { updateDate: alias.updateDate };
  }

  /** DeleteStateMachineAlias. */
  deleteStateMachineAlias(req: Json): Json {
    const { sm, name } = this.aliasOf(req.stateMachineAliasArn);
    this.putMachine(deleteAlias(sm, name));
    return {};
  }

  /** ListStateMachineAliases (paged). */
  listStateMachineAliases(req: Json): Json {
    const sm = this.machine(req.stateMachineArn);
    const { items, nextToken } = page(sm.aliases ?? [], req, `ListStateMachineAliases:${sm.stateMachineArn}`);
    return {
      stateMachineAliases: items.map((a) => ({ stateMachineAliasArn: aliasArn(sm, a.name), creationDate: a.creationDate })),
      ...(nextToken ? { nextToken } : {}),
    };
  }

  /** TagResource: state machines are the resources this engine has that take tags. */
  tagResource(req: Json): Json {
    const sm = this.taggable(req.resourceArn);
    if (!Array.isArray(req.tags))
      throw new SfnApiError(
        'ValidationException',
        "1 validation error detected: Value null at 'tags' failed to satisfy constraint: Member must not be null",
      );
    this.putMachine(tagRecord(sm, checkTags(req.tags)));
    return {};
  }

  /** UntagResource. */
  untagResource(req: Json): Json {
    const sm = this.taggable(req.resourceArn);
    this.putMachine(untagRecord(sm, req.tagKeys));
    return {};
  }

  /** ListTagsForResource. */
  listTagsForResource(req: Json): Json {
    return { tags: this.taggable(req.resourceArn).tags ?? [] };
  }

  /** TestState: one state run on its own (testState.ts), with this engine's task integrations. */
  async testState(req: Json): Promise<Json> {
    return testState(req, {
      execute: this.options.execute,
      ...(this.options.validate ? { validate: this.options.validate } : {}),
      supports: (resource) => this.invoker.supports(resource),
      baseOptions: {
        ...this.baseOptions(),
        invoker: this.invoker,
        roleArn: checkRole(req.roleArn, this.scope),
        stateMachineName: 'TestState',
        stateMachineArn: stateMachineArn(this.scope, 'TestState'),
        executionName: 'test-state',
        executionArn: executionArn(stateMachineArn(this.scope, 'TestState'), 'test-state', { id: randomUUID() }),
      },
    });
  }

  // ---------------------------------------------------------------- executions

  /** StartExecution; same name and input while RUNNING returns the same execution (AWS idempotency). */
  startExecution(req: Json, parentExecutionArn?: string): Json {
    const target = this.startTarget(req.stateMachineArn);
    const sm = target.sm;
    const name = req.name === undefined ? randomUUID() : checkName(req.name, 'execution');
    const input = checkInput(req.input);
    const arn = executionArn(sm.stateMachineArn, name);
    const existing = this.executions.get(arn);
    if (existing) {
      if (existing.status === 'RUNNING' && existing.input === input) return { executionArn: arn, startDate: existing.startDate };
      throw new SfnApiError('ExecutionAlreadyExists', `Execution Already Exists: '${arn}'`);
    }
    const record: ExecutionRecord = {
      executionArn: arn,
      stateMachineArn: sm.stateMachineArn,
      stateMachineName: sm.name,
      name,
      type: sm.type,
      definition: target.definition,
      roleArn: target.roleArn,
      status: 'RUNNING',
      input,
      startDate: Date.now(),
      redriveCount: 0,
      ...(parentExecutionArn !== undefined ? { parentExecutionArn } : {}),
      ...(target.stateMachineVersionArn !== undefined ? { stateMachineVersionArn: target.stateMachineVersionArn } : {}),
      ...(target.stateMachineAliasArn !== undefined ? { stateMachineAliasArn: target.stateMachineAliasArn } : {}),
    };
    this.executions.set(arn, record);
    if (this.durable(record)) this.store.putExecution(record);
    this.launch(record, this.definitionOf(target.definition), {});
    return { executionArn: arn, startDate: record.startDate };
  }

  /** StartSyncExecution (Express only): runs to the end and returns the result. */
  async startSyncExecution(req: Json): Promise<Json> {
    const target = this.startTarget(req.stateMachineArn);
    const sm = target.sm;
    if (sm.type !== 'EXPRESS') {
      throw new SfnApiError('StateMachineTypeNotSupported', 'This operation is not supported by this type of state machine');
    }
    const name = req.name === undefined ? randomUUID() : checkName(req.name, 'execution');
    const input = checkInput(req.input);
    const arn = executionArn(sm.stateMachineArn, name, { id: randomUUID() });
    const startDate = Date.now();
    let tokenSeq = 0;
    const result = await this.options.execute(this.definitionOf(target.definition), JSON.parse(input), {
      ...this.baseOptions(),
      invoker: this.invoker,
      executionArn: arn,
      executionName: name,
      stateMachineArn: sm.stateMachineArn,
      stateMachineName: sm.name,
      roleArn: target.roleArn,
      startTime: startDate,
      stateMachineType: 'EXPRESS',
      collectEvents: false,
      newTaskToken: () => newToken(arn, 0, tokenSeq++),
    });
    const status = result.status === 'ABORTED' ? 'FAILED' : result.status;
    return {
      executionArn: arn,
      stateMachineArn: sm.stateMachineArn,
      name,
      startDate,
      stopDate: result.stopTime,
      status,
      input,
      inputDetails: { included: true },
      ...(result.status === 'SUCCEEDED' ? { output: JSON.stringify(result.output ?? null), outputDetails: { included: true } } : {}),
      ...(result.error !== undefined ? { error: result.error } : {}),
      ...(result.cause !== undefined ? { cause: result.cause } : {}),
      billingDetails: {
        billedMemoryUsedInMB: 64,
        billedDurationInMilliseconds: Math.max(100, Math.ceil((result.stopTime - startDate) / 100) * 100),
      },
    };
  }

  /** DescribeExecution. */
  describeExecution(req: Json): Json {
    const e = this.execution(req.executionArn);
    const { redriveStatus, redriveStatusReason } = redriveState(e);
    return {
      executionArn: e.executionArn,
      stateMachineArn: e.stateMachineArn,
      name: e.name,
      status: e.status,
      startDate: e.startDate,
      ...(e.stopDate !== undefined ? { stopDate: e.stopDate } : {}),
      input: e.input,
      inputDetails: { included: true },
      ...(e.output !== undefined ? { output: e.output, outputDetails: { included: true } } : {}),
      ...(e.error !== undefined ? { error: e.error } : {}),
      ...(e.cause !== undefined ? { cause: e.cause } : {}),
      redriveCount: e.redriveCount,
      ...(e.redriveDate !== undefined ? { redriveDate: e.redriveDate } : {}),
      redriveStatus,
      ...(redriveStatusReason !== undefined ? { redriveStatusReason } : {}),
      ...(e.stateMachineVersionArn !== undefined ? { stateMachineVersionArn: e.stateMachineVersionArn } : {}),
      ...(e.stateMachineAliasArn !== undefined ? { stateMachineAliasArn: e.stateMachineAliasArn } : {}),
      ...(e.mapRunArn !== undefined ? { mapRunArn: e.mapRunArn } : {}),
    };
  }

  /** ListExecutions (newest first, optional statusFilter, paged). */
  listExecutions(req: Json): Json {
    const byMapRun = req.mapRunArn !== undefined && req.mapRunArn !== null;
    let listed: (e: ExecutionRecord) => boolean;
    let listing: string;
    if (byMapRun) {
      // A Map Run's child executions (ResourceNotFound and InvalidArn as DescribeMapRun answers them).
      if (req.stateMachineArn !== undefined && req.stateMachineArn !== null)
        throw new SfnApiError('ValidationException', 'Specify either a mapRunArn or a stateMachineArn, but not both.');
      const mapRunArn = this.mapRuns.require(req.mapRunArn);
      listed = (e) => e.mapRunArn === mapRunArn;
      listing = `ListExecutions:${mapRunArn}`;
    } else {
      // A version or alias ARN lists the executions started through it.
      const parts = parseStateMachineArn(req.stateMachineArn);
      const sm = this.machine(parts.stateMachineArn);
      listed = (e) =>
        e.stateMachineArn === sm.stateMachineArn &&
        (parts.version !== undefined
          ? e.stateMachineVersionArn === req.stateMachineArn
          : parts.alias !== undefined
            ? e.stateMachineAliasArn === req.stateMachineArn
            : true);
      listing = 'ListExecutions';
    }
    const filter = req.statusFilter;
    if (filter !== undefined && !['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED', 'PENDING_REDRIVE'].includes(String(filter))) {
      throw new SfnApiError(
        'ValidationException',
        `1 validation error detected: Value '${String(filter)}' at 'statusFilter' failed to satisfy constraint: Member must satisfy enum value set: [RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED, PENDING_REDRIVE]`,
      );
    }
    const all = [...this.executions.values()]
      .filter((e) => listed(e) && (filter === undefined || e.status === filter))
      .sort((a, b) => b.startDate - a.startDate || b.name.localeCompare(a.name));
    const { items, nextToken } = page(all, req, listing);
    return {
      executions: items.map((e) => ({
        executionArn: e.executionArn,
        stateMachineArn: e.stateMachineArn,
        name: e.name,
        status: e.status,
        startDate: e.startDate,
        ...(e.stopDate !== undefined ? { stopDate: e.stopDate } : {}),
        redriveCount: e.redriveCount,
        ...(e.redriveDate !== undefined ? { redriveDate: e.redriveDate } : {}),
        ...(e.stateMachineVersionArn !== undefined ? { stateMachineVersionArn: e.stateMachineVersionArn } : {}),
        ...(e.stateMachineAliasArn !== undefined ? { stateMachineAliasArn: e.stateMachineAliasArn } : {}),
        // Listed by Map Run: the run, and the one item each child processes (no ItemBatcher).
        ...(byMapRun ? { mapRunArn: e.mapRunArn, itemCount: 1 } : {}),
      })),
      ...(nextToken ? { nextToken } : {}),
    };
  }

  /** GetExecutionHistory (paged; reverseOrder; includeExecutionData=false drops inputs/outputs). */
  getExecutionHistory(req: Json): Json {
    const e = this.execution(req.executionArn);
    let events = this.events(e.executionArn);
    if (req.reverseOrder === true) events = [...events].reverse();
    const { items, nextToken } = page(events, req, `GetExecutionHistory:${e.executionArn}:${req.reverseOrder === true}`);
    const withData = req.includeExecutionData !== false;
    return { events: withData ? items : items.map(stripData), ...(nextToken ? { nextToken } : {}) };
  }

  /** ListMapRuns: the Map Runs an execution's distributed Map states started, oldest first (paged). */
  listMapRuns(req: Json): Json {
    const e = this.execution(req.executionArn);
    const { items, nextToken } = page(this.mapRuns.of(e), req, `ListMapRuns:${e.executionArn}`);
    return {
      mapRuns: items.map((r) => ({
        executionArn: r.executionArn,
        mapRunArn: r.mapRunArn,
        stateMachineArn: r.stateMachineArn,
        startDate: r.startDate,
        ...(r.stopDate !== undefined ? { stopDate: r.stopDate } : {}),
      })),
      ...(nextToken ? { nextToken } : {}),
    };
  }

  /** DescribeMapRun: a Map Run's status, dates, settings and item counts. */
  describeMapRun(req: Json): Json {
    return this.mapRuns.describe(req);
  }

  /** UpdateMapRun: changes a RUNNING Map Run's concurrency and tolerated failures for the items it has not started. */
  updateMapRun(req: Json): Json {
    return this.mapRuns.update(req);
  }

  /** Every event of an execution so far, in order. */
  events(executionArn: string): HistoryEvent[] {
    const stored = this.store.readEvents(executionArn);
    const child = this.childEvents.get(executionArn);
    if (child) return [...stored, ...child];
    const live = this.live.get(executionArn);
    return live && live.pending.length > 0 ? [...stored, ...live.pending] : stored;
  }

  /** StopExecution: aborts a RUNNING execution (ABORTED, with the given error and cause). */
  async stopExecution(req: Json): Promise<Json> {
    const e = this.execution(req.executionArn);
    const live = this.live.get(e.executionArn);
    if (e.status !== 'RUNNING') {
      throw new SfnApiError('ValidationException', `Execution is not running: '${e.executionArn}' is ${e.status}`);
    }
    if (e.mapRunArn !== undefined) {
      throw new SfnApiError(
        'ValidationException',
        `'${e.executionArn}' is a child execution of Map Run '${e.mapRunArn}': stop the execution that started the Map Run, or lower its tolerated failures with UpdateMapRun`,
      );
    }
    const reason = {
      ...(typeof req.error === 'string' ? { error: req.error } : {}),
      ...(typeof req.cause === 'string' ? { cause: req.cause } : {}),
    };
    if (!live) return { stopDate: this.abortDormant(e, reason) };
    live.controller.abort(reason);
    await live.done;
    return { stopDate: this.executions.get(e.executionArn)?.stopDate ?? Date.now() };
  }

  /** Ends a RUNNING execution that is not running in this process (loaded, not yet resumed). */
  private abortDormant(e: ExecutionRecord, reason: { error?: string; cause?: string }): number {
    const stopDate = Date.now();
    const cp = this.store.readCheckpoint(e.executionArn);
    if (cp) this.store.truncateEvents(e.executionArn, cp.eventCounter);
    const last = this.store.readEvents(e.executionArn).at(-1);
    const id = (last?.id ?? 0) + 1;
    this.store.appendEvents(e.executionArn, [
      {
        timestamp: stopDate,
        type: 'ExecutionAborted',
        id,
        previousEventId: cp?.previousEventId ?? last?.id ?? 0,
        executionAbortedEventDetails: reason,
      },
    ]);
    const record: ExecutionRecord = {
      ...this.mapRuns.withStaleRunsAborted(e, stopDate),
      status: 'ABORTED',
      stopDate,
      ...reason,
      ...(cp ? { redrivePoint: { ...cp, eventCounter: id, previousEventId: id } } : {}),
    };
    this.executions.set(e.executionArn, record);
    this.store.putExecution(record);
    this.store.putCheckpoint(e.executionArn, undefined);
    return stopDate;
  }

  /** RedriveExecution: re-runs a failed/timed-out/aborted Standard execution from the state that failed. */
  redriveExecution(req: Json): Json {
    const e = this.execution(req.executionArn);
    const { redriveStatus, redriveStatusReason } = redriveState(e);
    if (redriveStatus !== 'REDRIVABLE' || !e.redrivePoint) {
      throw new SfnApiError('ExecutionNotRedrivable', `Execution is not redrivable: ${redriveStatusReason ?? e.status}`);
    }
    const redriveDate = Date.now();
    const { output: _o, error: _e, cause: _c, stopDate: _s, ...rest } = e;
    const record: ExecutionRecord = { ...rest, status: 'RUNNING', redriveCount: e.redriveCount + 1, redriveDate };
    this.executions.set(e.executionArn, record);
    if (this.durable(record)) {
      this.store.putExecution(record);
      this.store.putCheckpoint(record.executionArn, e.redrivePoint);
    }
    this.launch(record, this.definitionOf(record.definition), { redriveFrom: e.redrivePoint });
    return { redriveDate };
  }

  /** SendTaskSuccess. */
  sendTaskSuccess(req: Json): Json {
    this.tokens.succeed(requireString(req.taskToken, 'taskToken'), requireString(req.output, 'output'));
    return {};
  }

  /** SendTaskFailure. */
  sendTaskFailure(req: Json): Json {
    this.tokens.fail(
      requireString(req.taskToken, 'taskToken'),
      typeof req.error === 'string' ? req.error : undefined,
      typeof req.cause === 'string' ? req.cause : undefined,
    );
    return {};
  }

  /** SendTaskHeartbeat. */
  sendTaskHeartbeat(req: Json): Json {
    this.tokens.heartbeat(requireString(req.taskToken, 'taskToken'));
    return {};
  }

  /** Resolves when the execution is no longer RUNNING (immediately if it is not). */
  async waitForExecution(executionArn: string, signal?: AbortSignal): Promise<ChildExecutionDescription> {
    const live = this.live.get(executionArn);
    if (live) {
      if (signal) {
        await new Promise<void>((resolve, reject) => {
          if (signal.aborted) return reject(signal.reason);
          const onAbort = () => reject(signal.reason);
          signal.addEventListener('abort', onAbort, { once: true });
          live.done.then(() => {
            signal.removeEventListener('abort', onAbort);
            resolve();
          });
        });
      } else await live.done;
    }
    const e = this.execution(executionArn);
    return {
      executionArn: e.executionArn,
      stateMachineArn: e.stateMachineArn,
      name: e.name,
      status: e.status,
      startDate: e.startDate,
      input: e.input,
      redriveCount: e.redriveCount,
      ...(e.stopDate !== undefined ? { stopDate: e.stopDate } : {}),
      ...(e.output !== undefined ? { output: e.output } : {}),
      ...(e.error !== undefined ? { error: e.error } : {}),
      ...(e.cause !== undefined ? { cause: e.cause } : {}),
    };
  }

  /** ChildExecutions: states:startExecution from a parent execution. */
  async startChild(
    params: { stateMachineArn: string; input: string; name?: string },
    parent: ContextObject,
  ): Promise<{ executionArn: string; startDate: number }> {
    const r = this.startExecution(
      { stateMachineArn: params.stateMachineArn, input: params.input, ...(params.name !== undefined ? { name: params.name } : {}) },
      parent.Execution.Id,
    );
    return { executionArn: String(r.executionArn), startDate: Number(r.startDate) };
  }

  /** ChildExecutions: stop a child whose parent task ended. */
  async stopChild(executionArn: string, error: string, cause: string): Promise<void> {
    if (this.live.has(executionArn)) await this.stopExecution({ executionArn, error, cause });
  }

  /** A Map Run's Standard child execution starts: its record, and its history kept until it ends. */
  private childStarted(child: MapRunChild): MapRunChildSink | undefined {
    if (this.closing) return undefined;
    const arn = child.executionArn;
    const record: ExecutionRecord = {
      executionArn: arn,
      stateMachineArn: child.stateMachineArn,
      stateMachineName: child.stateMachineArn.slice(child.stateMachineArn.lastIndexOf(':') + 1),
      name: child.name,
      type: 'STANDARD',
      definition: this.childDefinitionText(child.definition),
      roleArn: child.roleArn,
      status: 'RUNNING',
      input: JSON.stringify(child.input ?? null),
      startDate: child.startDate,
      redriveCount: 0,
      mapRunArn: child.mapRunArn,
    };
    this.executions.set(arn, record);
    this.store.putExecution(record);
    const pending: HistoryEvent[] = [];
    this.childEvents.set(arn, pending);
    return {
      onEvent: (event) => {
        // ExecutionStarted goes to the store at once, so a child a restart interrupts still has a whole history.
        if (event.type === 'ExecutionStarted' && !this.closing) this.store.appendEvents(arn, [event]);
        else pending.push(event);
      },
      ended: (result) => {
        this.childEvents.delete(arn);
        // A shutdown leaves the child RUNNING in the store; the next process marks it aborted.
        if (this.closing) return;
        this.store.appendEvents(arn, pending);
        // A child is redriven through its parent's Map Run, never on its own: it keeps no redrive point.
        const ended = endedRecord(this.executions.get(arn) ?? record, { ...result, redrivePoint: undefined });
        this.executions.set(arn, ended);
        this.store.putExecution(ended);
      },
    };
  }

  /** A child's state machine as text, made once per ItemProcessor (a Map Run's children share it). */
  private childDefinitionText(definition: Readonly<Record<string, unknown>>): string {
    let text = this.childDefinitions.get(definition);
    if (text === undefined) {
      text = JSON.stringify(definition);
      this.childDefinitions.set(definition, text);
    }
    return text;
  }

  /** Number of executions running now. */
  get running(): number {
    return this.live.size;
  }

  /**
   * Stops running executions WITHOUT recording an end: with a durable store they stay RUNNING at
   * their last checkpoint and resume in the next process (this is also what a crash looks like).
   */
  async close(): Promise<void> {
    this.closing = true;
    const all = [...this.live.values()];
    for (const l of all) l.controller.abort({ error: 'States.Aborted', cause: 'The engine is shutting down.' });
    await Promise.all(all.map((l) => l.done));
    this.invoker.close();
    await this.store.close?.();
  }

  // ---------------------------------------------------------------- internals

  private baseOptions(): Partial<ExecuteOptions> {
    return {
      partition: this.scope.partition,
      region: this.scope.region,
      account: this.scope.account,
      ...(this.options.clock ? { clock: this.options.clock } : {}),
    };
  }

  /**
   * The parsed definition of a stored definition text (a state machine's, a version's, an
   * execution's copy of one), shared by every execution of it. Each was checked by `validate`
   * when it was stored, by this process or an earlier one, so its runs do not check it again.
   */
  private definitionOf(text: string): AslDefinition {
    let d = this.definitions.get(text);
    if (!d) {
      d = JSON.parse(text) as AslDefinition;
      if (this.options.validate !== undefined && d !== null && typeof d === 'object') markValidDefinition(d);
      if (this.definitions.size >= 1000) this.definitions.clear();
      this.definitions.set(text, d);
    }
    return d;
  }

  private durable(r: ExecutionRecord): boolean {
    return r.type === 'STANDARD';
  }

  /** Runs (or resumes, or redrives) an execution in the background, persisting as it goes. */
  private launch(record: ExecutionRecord, definition: AslDefinition, from: { resumeFrom?: Checkpoint; redriveFrom?: Checkpoint }): void {
    const arn = record.executionArn;
    const durable = this.durable(record) && this.store.durable;
    const persist = this.durable(record);
    const controller = new AbortController();
    const start = from.resumeFrom ?? from.redriveFrom;
    const live: Live = { record, controller, done: Promise.resolve(), pending: [], lastEventId: start?.eventCounter ?? 0 };
    let tokenSeq = 0;
    const flush = () => {
      if (live.pending.length === 0) return;
      this.store.appendEvents(arn, live.pending);
      live.pending = [];
    };
    const options: ExecuteOptions = {
      ...this.baseOptions(),
      invoker: this.invoker,
      executionArn: arn,
      executionName: record.name,
      stateMachineArn: record.stateMachineArn,
      stateMachineName: record.stateMachineName,
      roleArn: record.roleArn,
      startTime: record.startDate,
      stateMachineType: record.type,
      signal: controller.signal,
      collectEvents: false,
      redriveCount: record.redriveCount,
      mapRuns: this.mapRuns.listener(persist),
      onEvent: (event) => {
        live.lastEventId = event.id;
        if (!persist) return;
        live.pending.push(event);
        // Without a durable store there is no restart to prepare for: hand events over at once.
        if (!durable || event.type === 'ExecutionStarted' || event.type === 'ExecutionRedriven') flush();
        // A redrive that crashes before its first transition resumes after its ExecutionRedriven event.
        if (durable && event.type === 'ExecutionRedriven' && from.redriveFrom && !this.closing) {
          this.store.putCheckpoint(arn, { ...from.redriveFrom, eventCounter: event.id, previousEventId: event.id });
        }
      },
      // Deterministic per position, so a resumed task re-issues the token its first attempt sent out.
      newTaskToken: () => newToken(arn, live.lastEventId, tokenSeq++),
      ...(durable
        ? {
            checkpoint: (cp: Checkpoint) => {
              if (this.closing) return;
              this.store.appendCheckpoint(arn, live.pending, cp);
              live.pending = [];
            },
          }
        : {}),
      ...(from.resumeFrom ? { resumeFrom: from.resumeFrom } : {}),
      ...(from.redriveFrom ? { redriveFrom: from.redriveFrom } : {}),
    };
    let input: unknown;
    try {
      input = JSON.parse(record.input);
    } catch {
      input = {};
    }
    this.live.set(arn, live);
    live.done = this.options.execute(definition, input, options).then(
      (result) => this.finish(arn, live, result, persist, flush),
      (e: unknown) =>
        this.finish(
          arn,
          live,
          {
            status: 'FAILED',
            error: 'States.Runtime',
            cause: `The engine failed: ${e instanceof Error ? e.message : String(e)}`,
            events: [],
            startTime: record.startDate,
            stopTime: Date.now(),
          },
          persist,
          flush,
        ),
    );
  }

  private finish(arn: string, live: Live, result: ExecutionResult, persist: boolean, flush: () => void): void {
    this.live.delete(arn);
    if (this.closing) return; // leave it RUNNING at its last checkpoint for the next process
    const record = endedRecord(this.executions.get(arn) ?? live.record, result);
    this.executions.set(arn, record);
    if (persist) {
      flush();
      this.store.putExecution(record);
      if (this.store.durable) this.store.putCheckpoint(arn, undefined);
    }
  }

  private checkDefinition(raw: unknown): string {
    if (typeof raw !== 'string' || raw === '') {
      throw new SfnApiError(
        'ValidationException',
        "1 validation error detected: Value null at 'definition' failed to satisfy constraint: Member must not be null",
      );
    }
    const problems = this.definitionProblems(raw);
    if (problems.length > 0) {
      throw new SfnApiError(
        'InvalidDefinition',
        `Invalid State Machine Definition: '${problems.map((p) => `${p.code}: ${p.message}${p.path ? ` at ${p.path}` : ''}`).join(', ')}'`,
      );
    }
    return substitutePlaceholders(raw, this.options.substitutions);
  }

  /** Everything wrong with a definition text (after substitutions): JSON, interpreter validation, resources. */
  private definitionProblems(raw: unknown): { code: string; message: string; path?: string }[] {
    if (typeof raw !== 'string') return [{ code: 'SCHEMA_VALIDATION_FAILED', message: 'The definition must be a string' }];
    const text = substitutePlaceholders(raw, this.options.substitutions);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      return [{ code: 'INVALID_JSON_DESCRIPTION', message: (e as Error).message }];
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      return [{ code: 'SCHEMA_VALIDATION_FAILED', message: 'The definition must be a JSON object' }];
    }
    const problems: { code: string; message: string; path?: string }[] = [];
    for (const d of this.options.validate?.(parsed as AslDefinition) ?? [])
      problems.push({ code: d.code, message: d.message, path: d.path });
    for (const { resource, path } of collectTaskResources(parsed)) {
      const why = this.invoker.supports(resource);
      if (why !== undefined && !problems.some((p) => p.path === path))
        problems.push({ code: 'SCHEMA_VALIDATION_FAILED', message: why, path });
    }
    return problems;
  }

  private putMachine(record: StateMachineRecord): void {
    this.store.putStateMachine(record);
    this.machines.set(record.stateMachineArn, record);
  }

  /** Publishes the record's current revision (storing the record) and returns the version's ARN. */
  private publish(record: StateMachineRecord, description: unknown): { stateMachineVersionArn: string } {
    const { record: published, version } = publishVersion(record, { description }, Date.now());
    this.putMachine(published);
    return { stateMachineVersionArn: versionArn(published, version.version) };
  }

  /** What a state machine, version or alias ARN starts: an alias picks one of its versions. */
  private startTarget(arn: unknown): StartTarget {
    const parts = parseStateMachineArn(arn);
    const sm = this.machines.get(parts.stateMachineArn);
    if (!sm) throw new SfnApiError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${String(arn)}'`);
    if (parts.version === undefined && parts.alias === undefined) return { sm, definition: sm.definition, roleArn: sm.roleArn };
    let version = parts.version;
    let alias: string | undefined;
    if (parts.alias !== undefined) {
      const a = sm.aliases?.find((x) => x.name === parts.alias);
      if (!a) throw new SfnApiError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${String(arn)}' (no such alias)`);
      const routed = routeAlias(a, this.options.random);
      version = Number(routed.slice(routed.lastIndexOf(':') + 1));
      alias = aliasArn(sm, a.name);
    }
    const v = findVersion(sm, version!);
    if (!v) throw new SfnApiError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${String(arn)}' (no such version)`);
    return {
      sm,
      definition: v.definition,
      roleArn: v.roleArn,
      stateMachineVersionArn: versionArn(sm, v.version),
      ...(alias !== undefined ? { stateMachineAliasArn: alias } : {}),
    };
  }

  /** An alias ARN's state machine and alias name. */
  private aliasOf(arn: unknown): { sm: StateMachineRecord; name: string } {
    const parts = parseStateMachineArn(arn, 'stateMachineAliasArn');
    if (parts.alias === undefined)
      throw new SfnApiError('InvalidArn', `Invalid Arn: '${String(arn)}' is not an alias ARN (arn:…:stateMachine:<name>:<alias>)`);
    const sm = this.machines.get(parts.stateMachineArn);
    if (!sm) throw new SfnApiError('ResourceNotFound', `Resource not found: '${String(arn)}'`);
    return { sm, name: parts.alias };
  }

  /** The state machine a tag operation names (ResourceNotFound when it does not exist). */
  private taggable(arn: unknown): StateMachineRecord {
    if (typeof arn !== 'string' || arn === '')
      throw new SfnApiError(
        'ValidationException',
        "1 validation error detected: Value null at 'resourceArn' failed to satisfy constraint: Member must not be null",
      );
    const parts = parseStateMachineArn(arn, 'resourceArn');
    if (parts.version !== undefined || parts.alias !== undefined) {
      throw new SfnApiError('InvalidArn', `Invalid Arn: '${arn}': tags belong to the state machine; tag '${parts.stateMachineArn}'`);
    }
    const sm = this.machines.get(parts.stateMachineArn);
    if (!sm) throw new SfnApiError('ResourceNotFound', `Resource not found: '${arn}'`);
    return sm;
  }

  private machine(arn: unknown): StateMachineRecord {
    const a = checkStateMachineArn(arn);
    const m = this.machines.get(a);
    if (!m) throw new SfnApiError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${a}'`);
    return m;
  }

  private execution(arn: unknown): ExecutionRecord {
    const a = checkExecutionArn(arn);
    const e = this.executions.get(a);
    if (!e) throw new SfnApiError('ExecutionDoesNotExist', `Execution Does Not Exist: '${a}'`);
    return e;
  }
}

/** Task tokens carry their execution, so a completion that races a resume can be held for it. */
/** An execution's record once it has ended with a result: what an earlier end recorded is replaced. */
function endedRecord(current: ExecutionRecord, result: ExecutionResult): ExecutionRecord {
  const { output: _o, error: _e, cause: _c, redrivePoint: _r, ...rest } = current;
  return {
    ...rest,
    status: result.status,
    stopDate: result.stopTime,
    ...(result.status === 'SUCCEEDED' ? { output: JSON.stringify(result.output ?? null) } : {}),
    ...(result.error !== undefined ? { error: result.error } : {}),
    ...(result.cause !== undefined ? { cause: result.cause } : {}),
    ...(result.redrivePoint !== undefined ? { redrivePoint: result.redrivePoint } : {}),
  };
}

function newToken(executionArn: string, lastEventId: number, seq = 0): string {
  return `${Buffer.from(executionArn).toString('base64url')}.${lastEventId}.${seq}`;
}

function executionOfToken(token: string): string | undefined {
  const dot = token.indexOf('.');
  if (dot <= 0) return undefined;
  try {
    return Buffer.from(token.slice(0, dot), 'base64url').toString('utf8');
  } catch {
    return undefined;
  }
}

function checkType(t: unknown): 'STANDARD' | 'EXPRESS' {
  if (t === undefined) return 'STANDARD';
  if (t === 'STANDARD' || t === 'EXPRESS') return t;
  throw new SfnApiError(
    'ValidationException',
    `1 validation error detected: Value '${String(t)}' at 'type' failed to satisfy constraint: Member must satisfy enum value set: [STANDARD, EXPRESS]`,
  );
}

/** `publish` and `versionDescription` of CreateStateMachine and UpdateStateMachine. */
function checkPublish(req: Json): boolean {
  if (req.publish !== undefined && typeof req.publish !== 'boolean') {
    throw new SfnApiError(
      'ValidationException',
      `1 validation error detected: Value '${String(req.publish)}' at 'publish' failed to satisfy constraint: Member must be a boolean`,
    );
  }
  if (req.versionDescription !== undefined && req.publish !== true) {
    throw new SfnApiError('ValidationException', 'Version description can only be set when publish is true');
  }
  return req.publish === true;
}

function checkRole(r: unknown, s: ArnScope): string {
  if (r === undefined) return `arn:${s.partition}:iam::${s.account}:role/stepforge-local`;
  if (typeof r !== 'string' || !/^arn:[^:]+:iam::[^:]*:role\/.+$/.test(r))
    throw new SfnApiError('InvalidArn', `Invalid Arn: 'Role ARN is not valid: ${String(r)}'`);
  return r;
}

function checkInput(input: unknown): string {
  if (input === undefined || input === null) return '{}';
  if (typeof input !== 'string') throw new SfnApiError('InvalidExecutionInput', 'Invalid execution input: the input must be a JSON text.');
  if (Buffer.byteLength(input) > MAX_INPUT_BYTES)
    throw new SfnApiError('InvalidExecutionInput', `Invalid execution input: the input is larger than ${MAX_INPUT_BYTES} bytes.`);
  try {
    JSON.parse(input);
  } catch (e) {
    throw new SfnApiError('InvalidExecutionInput', `Invalid execution input: ${(e as Error).message}`);
  }
  return input;
}

function requireString(v: unknown, field: string): string {
  if (typeof v !== 'string')
    throw new SfnApiError(
      'ValidationException',
      `1 validation error detected: Value null at '${field}' failed to satisfy constraint: Member must not be null`,
    );
  return v;
}

function redriveState(e: ExecutionRecord): { redriveStatus: string; redriveStatusReason?: string } {
  if (e.mapRunArn !== undefined)
    return {
      redriveStatus: 'NOT_REDRIVABLE',
      redriveStatusReason: 'A Map Run child execution is redriven with the execution that started it',
    };
  if (e.type === 'EXPRESS') return { redriveStatus: 'NOT_REDRIVABLE', redriveStatusReason: 'Express executions cannot be redriven' };
  if (!TERMINAL_REDRIVABLE.has(e.status))
    return { redriveStatus: 'NOT_REDRIVABLE', redriveStatusReason: `Execution is ${e.status} and cannot be redriven` };
  if (!e.redrivePoint) return { redriveStatus: 'NOT_REDRIVABLE', redriveStatusReason: 'Execution has no state to redrive from' };
  return { redriveStatus: 'REDRIVABLE' };
}

/** Offset paging with an opaque token that is only valid for the same listing. */
function page<T>(all: readonly T[], req: Json, listing: string): { items: T[]; nextToken?: string } {
  const max = req.maxResults === undefined || req.maxResults === 0 ? 100 : Number(req.maxResults);
  if (!Number.isInteger(max) || max < 0 || max > 1000) {
    throw new SfnApiError(
      'ValidationException',
      `1 validation error detected: Value '${String(req.maxResults)}' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to 1000`,
    );
  }
  let offset = 0;
  if (req.nextToken !== undefined && req.nextToken !== null) {
    try {
      const t = JSON.parse(Buffer.from(String(req.nextToken), 'base64url').toString('utf8')) as { l: string; o: number };
      if (t.l !== listing || !Number.isInteger(t.o) || t.o < 0) throw new Error('other listing');
      offset = t.o;
    } catch {
      throw new SfnApiError('InvalidToken', `Invalid Token: '${String(req.nextToken)}'`);
    }
  }
  const items = all.slice(offset, offset + max);
  const next = offset + max;
  return next < all.length ? { items, nextToken: Buffer.from(JSON.stringify({ l: listing, o: next })).toString('base64url') } : { items };
}

/** A history event without inputs/outputs (includeExecutionData = false). */
function stripData(e: HistoryEvent): HistoryEvent {
  const out: HistoryEvent = { ...e };
  for (const [k, v] of Object.entries(e)) {
    if (!k.endsWith('EventDetails') || v === null || typeof v !== 'object') continue;
    const { input: _i, output: _o, ...rest } = v as Record<string, unknown>;
    out[k] = rest;
  }
  return out;
}
