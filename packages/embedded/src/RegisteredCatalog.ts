import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { StepforgeError, compileDocument, duplicateWorkflowError, type CompileResult, type NamedWorkflow } from '@stepforge/compiler';
import { codeChildren } from '@stepforge/compiler';
import { workflowNameClash } from './workflowNameClash.js';
import { loadFunctionsRuntime } from './functionsRuntime.js';
import { embeddedStateMachineArn, type StateMachineActions } from './engineStateMachines.js';
import { workflowRecord, type WorkflowCatalog, type WorkflowEntry, type WorkflowStore } from '@stepforge/runtime';

export type { CatalogStep, WorkflowEntry } from '@stepforge/runtime';
import { CODE_MODULE, compileCodeModule } from './compileCodeModule.js';
import { gatedTools, requirePolicyFor, resolvePolicy, type ResolvedPolicy } from './resolvePolicy.js';

/** Options of registerFile and registerText. */
export interface RegisterOptions {
  /**
   * The project's workflows registered so far in this pass (serve: workflows/ and examples/), by
   * workflow name. A document whose workflow name one of them has is StepforgeError
   * `duplicate_workflow` and is not registered (it would replace the other's state machine);
   * one registered is added.
   */
  readonly project?: Map<string, NamedWorkflow>;
  /** Values for a Contenox chain's `{{var:NAME}}` macros. */
  readonly vars?: Readonly<Record<string, string>>;
  /** A run: an unfilled macro is an error before anything starts. */
  readonly requireMacros?: boolean;
  /** A module exporting several workflows written in code: the one to register. */
  readonly exportName?: string;
  /** Already compiled (a module's workflow: there is no document text to compile). */
  readonly compiled?: CompileResult;
}

const ROLE_ARN = 'arn:aws:iam::123456789012:role/StepforgeEmbedded';

/**
 * The embedded stack's WorkflowCatalog: compiles documents and registers them as state machines
 * with the engine, keeping a small record per workflow (steps, edges, input schema) in the
 * runtime table (WorkflowStore), so that any process — `runs restart` computing a downstream set,
 * `serve` listing workflows — knows the topology without the source file.
 */
export class RegisteredCatalog implements WorkflowCatalog {
  constructor(
    private readonly stateMachines: StateMachineActions,
    private readonly store: WorkflowStore,
    private readonly projectDir: string,
    private readonly env: Readonly<Record<string, string | undefined>> = process.env,
  ) {}

  /** Reads, compiles (StepforgeError on invalid documents) and registers `file`. */
  async registerFile(
    file: string,
    options: RegisterOptions = {},
    registering: Set<string> = new Set(),
  ): Promise<{ entry: WorkflowEntry; compiled: CompileResult }> {
    const { text, compiled } = await compileWorkflowFile(this.projectDir, file, options);
    registering.add(compiled.name);
    // The child workflows its nodes call with useWorkflow run as state machines of their own, which
    // the parent's nested executions start by name: registered first, from the same module.
    for (const child of codeChildren(compiled.ir)) {
      if (registering.has(child.name)) continue;
      await this.registerFile(
        file,
        { ...(options.project !== undefined ? { project: options.project } : {}), exportName: child.exportName },
        registering,
      );
    }
    return this.registerText(text, file, { ...options, compiled });
  }

  /** Compiles and registers a document's text. */
  async registerText(
    text: string,
    file?: string,
    options: RegisterOptions = {},
  ): Promise<{ entry: WorkflowEntry; compiled: CompileResult }> {
    const compiled =
      options.compiled ??
      compileDocument(text, {
        ...(file !== undefined ? { file } : {}),
        ...(options.vars !== undefined ? { vars: options.vars } : {}),
        ...(options.requireMacros ? { requireMacros: true } : {}),
      });
    // Before anything is registered: a policy that cannot be read, or a workflow that can change
    // things with no policy at all, stops here.
    const policy = resolvePolicy(await loadFunctionsRuntime(), {
      ...(file !== undefined ? { file } : {}),
      baseDir: this.projectDir,
      env: this.env,
    });
    requirePolicyFor(compiled.name, gatedTools(compiled.ir.workflow), policy, file);
    const named: NamedWorkflow = {
      name: compiled.name,
      displayName: compiled.displayName,
      file: file ?? '<input>',
      source: text,
      ...(compiled.ir.nameLocation !== undefined ? { nameLocation: compiled.ir.nameLocation } : {}),
    };
    const other = options.project?.get(compiled.name);
    if (other !== undefined) throw duplicateWorkflowError(other, named);
    // What an earlier run or serve registered under this workflow name, from another document of the project.
    if (file !== undefined) {
      const registered = await this.get(compiled.name);
      const clash = registered && workflowNameClash(this.projectDir, registered, named);
      if (clash) throw duplicateWorkflowError(clash, named);
    }
    const definition = JSON.stringify(compiled.asl);
    const stateMachineArn = await this.#upsertStateMachine(compiled.name, definition);
    // The record the AWS stack writes at deploy time, from the same manifest (input schema, steps, edges, version).
    const record = workflowRecord(compiled.manifest, definition, file);
    const version = record.version!;
    const entry: WorkflowEntry = {
      ...record,
      displayName: compiled.displayName,
      stateMachineArn,
      updatedAt: new Date().toISOString(),
      policy: { sources: policy.sources, rules: policy.rules },
    };
    await this.store.put(entry.name, version, entry);
    options.project?.set(compiled.name, named);
    return { entry, compiled };
  }

  /** The workflow as registered now, or as it was at `version` (undefined when that version is not kept). */
  get(name: string, version?: string): Promise<WorkflowEntry | undefined> {
    return this.store.get<WorkflowEntry>(name, version);
  }

  /** The workflow as the run ran it: its version, or for a run that recorded none, as registered now. */
  async forRun(run: { readonly workflow: string; readonly workflowVersion?: string }): Promise<WorkflowEntry | undefined> {
    if (run.workflowVersion !== undefined) {
      const ran = await this.get(run.workflow, run.workflowVersion);
      if (ran) return ran;
    }
    return this.get(run.workflow);
  }

  /** Every registered workflow, by name. */
  async list(): Promise<WorkflowEntry[]> {
    return (await this.store.list<WorkflowEntry>()).sort((a, b) => a.name.localeCompare(b.name));
  }

  async #upsertStateMachine(name: string, definition: string): Promise<string> {
    try {
      const r = await this.stateMachines.create({ name, definition, roleArn: ROLE_ARN, type: 'STANDARD' });
      return r.stateMachineArn!;
    } catch (e) {
      if ((e as { name?: string }).name !== 'StateMachineAlreadyExists') throw e;
    }
    const arn = embeddedStateMachineArn(name);
    const current = await this.stateMachines.describe({ stateMachineArn: arn });
    if (current.definition !== definition) {
      await this.stateMachines.update({ stateMachineArn: arn, definition });
    }
    return arn;
  }
}

/**
 * Reads and compiles `file` (a document, or a module's workflow written in code), relative to
 * `projectDir`, with no stack: StepforgeError on a file that cannot be read or does not compile.
 * Already compiled (`options.compiled`), it is only read.
 */
export async function compileWorkflowFile(
  projectDir: string,
  file: string,
  options: Pick<RegisterOptions, 'vars' | 'requireMacros' | 'exportName' | 'compiled'> = {},
): Promise<{ text: string; compiled: CompileResult }> {
  // A TypeScript or JavaScript module: the code front-end imports it and compiles its workflow.
  if (CODE_MODULE.test(file))
    return { text: '', compiled: options.compiled ?? (await compileCodeModule(projectDir, file, options.exportName)) };
  let text: string;
  try {
    text = readFileSync(isAbsolute(file) ? file : join(projectDir, file), 'utf8');
  } catch (e) {
    throw new StepforgeError('file_not_found', `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, {
      location: { file, line: 1, column: 1 },
    });
  }
  const compiled =
    options.compiled ??
    compileDocument(text, {
      file,
      ...(options.vars !== undefined ? { vars: options.vars } : {}),
      ...(options.requireMacros ? { requireMacros: true } : {}),
    });
  return { text, compiled };
}
