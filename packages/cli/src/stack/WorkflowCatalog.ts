import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { GetItemCommand, PutItemCommand, ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  CreateStateMachineCommand,
  DescribeStateMachineCommand,
  UpdateStateMachineCommand,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import {
  InputSectionSpec,
  StepforgeError,
  compileDocument,
  loadDocument,
  toInputSchema,
  type CompileResult,
  type InputSchema,
  type IrWorkflow,
} from '@stepforge/compiler';

/** One step of a registered workflow: what progress displays and forks need. */
export interface CatalogStep {
  readonly id: string;
  readonly kind: string;
  /** The state standing for the step, then every helper state it became. */
  readonly state: string;
  readonly states: readonly string[];
  readonly parent?: string;
  /** True when the step reaches a Lambda (so it has step records). */
  readonly lambda: boolean;
}

/** A workflow registered with the engine. */
export interface WorkflowEntry {
  readonly name: string;
  readonly file?: string;
  readonly format: 'chain' | 'dsl';
  readonly stateMachineArn: string;
  readonly inputSchema: InputSchema;
  readonly steps: readonly CatalogStep[];
  /** `[from, to]` by step id: `to` runs after (and may read) `from`; nested bodies included. */
  readonly edges: readonly (readonly [string, string])[];
  readonly updatedAt: string;
}

const ROLE_ARN = 'arn:aws:iam::123456789012:role/StepforgeEmbedded';
const pk = (name: string) => `WORKFLOW#${name}`;

/**
 * Compiles documents and registers them as state machines, keeping a small record per workflow
 * (steps, edges, input schema) in the runtime table under `WORKFLOW#<name>`, so that any process
 * — `runs restart` computing a downstream set, `serve` listing workflows — knows the topology
 * without the source file.
 */
export class WorkflowCatalog {
  constructor(
    private readonly sfn: SFNClient,
    private readonly dynamodb: DynamoDBClient,
    private readonly tableName: string,
    private readonly projectDir: string,
  ) {}

  /** Reads, compiles (StepforgeError on invalid documents) and registers `file`. */
  async registerFile(file: string): Promise<{ entry: WorkflowEntry; compiled: CompileResult }> {
    let text: string;
    const shown = file;
    try {
      text = readFileSync(isAbsolute(file) ? file : join(this.projectDir, file), "utf8");
    } catch (e) {
      throw new StepforgeError('file_not_found', `cannot read ${shown}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, {
        location: { file: shown, line: 1, column: 1 },
      });
    }
    return this.registerText(text, shown);
  }

  /** Compiles and registers a document's text. */
  async registerText(text: string, file?: string): Promise<{ entry: WorkflowEntry; compiled: CompileResult }> {
    const compiled = compileDocument(text, file !== undefined ? { file } : {});
    const loaded = loadDocument(text, { ...(file !== undefined ? { file } : {}), level: 'topology' });
    const inputSchema = inputSchemaOf((loaded.document as { input?: unknown } | undefined)?.input);
    const definition = JSON.stringify(compiled.asl);
    const stateMachineArn = await this.#upsertStateMachine(compiled.name, definition);
    const steps: CatalogStep[] = compiled.manifest.steps.map((s) => ({
      id: s.id, kind: s.kind, state: s.state, states: s.states,
      ...(s.parent !== undefined ? { parent: s.parent } : {}),
      lambda: s.handler !== null,
    }));
    const entry: WorkflowEntry = {
      name: compiled.name,
      ...(file !== undefined ? { file } : {}),
      format: compiled.manifest.format,
      stateMachineArn,
      inputSchema,
      steps,
      edges: edgesOf(compiled.ir.workflow),
      updatedAt: new Date().toISOString(),
    };
    await this.dynamodb.send(new PutItemCommand({
      TableName: this.tableName,
      Item: { pk: { S: pk(entry.name) }, sk: { S: 'WORKFLOW' }, body: { S: JSON.stringify(entry) } },
    }));
    return { entry, compiled };
  }

  async get(name: string): Promise<WorkflowEntry | undefined> {
    const r = await this.dynamodb.send(new GetItemCommand({ TableName: this.tableName, Key: { pk: { S: pk(name) }, sk: { S: 'WORKFLOW' } }, ConsistentRead: true }));
    const body = r.Item?.body?.S;
    return body ? (JSON.parse(body) as WorkflowEntry) : undefined;
  }

  /** Every registered workflow, by name. */
  async list(): Promise<WorkflowEntry[]> {
    const out: WorkflowEntry[] = [];
    let start: Record<string, never> | undefined;
    do {
      // A small table of workflows in the runs table: a filtered scan is fine embedded.
      const r = await this.dynamodb.send(new ScanCommand({
        TableName: this.tableName,
        FilterExpression: 'sk = :sk',
        ExpressionAttributeValues: { ':sk': { S: 'WORKFLOW' } },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }));
      for (const it of r.Items ?? []) if (it.body?.S) out.push(JSON.parse(it.body.S) as WorkflowEntry);
      start = r.LastEvaluatedKey as Record<string, never> | undefined;
    } while (start);
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  async #upsertStateMachine(name: string, definition: string): Promise<string> {
    try {
      const r = await this.sfn.send(new CreateStateMachineCommand({ name, definition, roleArn: ROLE_ARN, type: 'STANDARD' }));
      return r.stateMachineArn!;
    } catch (e) {
      if ((e as { name?: string }).name !== 'StateMachineAlreadyExists') throw e;
    }
    const arn = `arn:aws:states:us-east-1:123456789012:stateMachine:${name}`;
    const current = await this.sfn.send(new DescribeStateMachineCommand({ stateMachineArn: arn }));
    if (current.definition !== definition) {
      await this.sfn.send(new UpdateStateMachineCommand({ stateMachineArn: arn, definition }));
    }
    return arn;
  }
}

/** The `input:` section as an InputSchema (chain documents keep it raw, DSL documents normalised). */
export function inputSchemaOf(raw: unknown): InputSchema {
  if (raw !== null && typeof raw === 'object' && Array.isArray((raw as { fields?: unknown }).fields)) return raw as InputSchema;
  const parsed = InputSectionSpec.safeParse(raw ?? {});
  return parsed.success ? toInputSchema(parsed.data) : { fields: [] };
}

function edgesOf(wf: IrWorkflow): [string, string][] {
  const out: [string, string][] = [];
  const visit = (w: IrWorkflow): void => {
    for (const [a, b] of w.edges) out.push([w.steps[a]!.id, w.steps[b]!.id]);
    for (const s of w.steps) if (s.composite?.body) visit(s.composite.body);
  };
  visit(wf);
  return out;
}

/**
 * The steps `restart --from step` re-runs: the step, everything downstream of it, every step
 * nested inside one of those, and — when the step is nested — its enclosing steps and their
 * downstream, because their outputs change too.
 */
export function downstreamSet(entry: WorkflowEntry, step: string): Set<string> {
  const set = new Set<string>();
  const children = new Map<string, string[]>();
  for (const [a, b] of entry.edges) children.set(a, [...(children.get(a) ?? []), b]);
  const parentOf = new Map(entry.steps.filter((s) => s.parent !== undefined).map((s) => [s.id, s.parent!]));
  const seen = new Set<string>();
  const add = (id: string, nested: boolean): void => {
    const key = `${id}/${nested}`;
    if (seen.has(key)) return;
    seen.add(key);
    set.add(id);
    for (const c of children.get(id) ?? []) add(c, true);
    // Siblings inside an enclosing loop keep their records: only what reads the step re-runs.
    if (nested) for (const s of entry.steps) if (s.parent === id) add(s.id, true);
    const p = parentOf.get(id);
    if (p !== undefined) add(p, false);
  };
  add(step, true);
  return set;
}
