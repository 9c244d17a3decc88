// The compiler's front door: any document → IR → ASL + step manifest + `--explain` report.
import type { ChainDocument } from './chain/ChainDocument.js';
import type { DslDocument } from './dsl/DslDocument.js';
import { StepforgeError, type Diagnostic } from '@stepforge/contract';
import { InputSectionSpec, toInputSchema, type InputSchema } from './input/InputSchema.js';
import { chainToIr } from './ir/chainToIr.js';
import { dslToIr } from './ir/dslToIr.js';
import { contenoxToIr } from './ir/contenoxToIr.js';
import type { ContenoxDocument } from './contenox/ContenoxDocument.js';
import { workflowSlug } from './workflowSlug.js';
import type { IrDocument } from './ir/Ir.js';
import { loadDocument } from './loadDocument.js';
import type { UserFunctionsFolder } from './dsl/loadDslDocument.js';
import { checkQuotas, type QuotaReport } from './checks/quotas/checkQuotas.js';
import { checkExpress, expressBlocker } from './checks/quotas/express.js';
import { lowerWorkflow } from './lower/lowerWorkflow.js';
import { worstCaseAttempts } from './lower/renderRetry.js';
import { routesOnItsAgents } from './lower/stateReadSteps.js';
import { buildStepManifest, type StepManifest } from './lower/StepManifest.js';
import { serialisedDefinition } from './lower/serialisedDefinition.js';
import { workflowNameFromFile } from './workflowNameFromFile.js';

/** Options of compileDocument. */
export interface CompileOptions {
  readonly file?: string;
  /**
   * Compile for an Express state machine (no 25,000-event history bound). `'requested'`: as the CDK
   * app deploys a document, Express when the document asks for it (`express: true`) and the
   * definition can run as one, Standard otherwise (the manifest's `express.blocker` says why).
   */
  readonly express?: boolean | 'requested';
  /** Unknown fields are errors. */
  readonly strict?: boolean;
  /** Contenox chains: values for `{{var:NAME}}` macros. */
  readonly vars?: Readonly<Record<string, string>>;
  /** Contenox chains: an unfilled macro is an error (a run asks for this). */
  readonly requireMacros?: boolean;
  /** DSL documents: the project's user functions folder, when known (see LoadDslOptions). */
  readonly functions?: UserFunctionsFolder;
}

/** What `compile --explain` reports. */
export interface CompileExplain {
  /** Ordering edges added to make the graph series-parallel (`[from, to]` step ids). */
  readonly addedEdges: [string, string][];
  /** Makespan of the compiled schedule ÷ critical path, unit step durations (1 = no parallelism lost). */
  readonly estimatedSlowdown: number;
  readonly notes: string[];
  readonly quotas: QuotaReport;
}

/** A compiled workflow. */
export interface CompileResult {
  /** The workflow name: the state machine's and the compiled files' (ASCII, see workflowSlug). */
  readonly name: string;
  /** The name for people to read (the DSL's `document.name` as written; the workflow name otherwise). */
  readonly displayName: string;
  readonly asl: Record<string, unknown>;
  readonly manifest: StepManifest;
  readonly explain: CompileExplain;
  readonly warnings: Diagnostic[];
  readonly ir: IrDocument;
}

/** Compiles a chain or DSL document to ASL. Throws the first StepforgeError on invalid input. */
export function compileDocument(text: string, options: CompileOptions = {}): CompileResult {
  const { ir, warnings } = loadIr(text, options);
  return compileIr(ir, options, warnings);
}

/**
 * The document's IR and the loader's warnings. A function of its own so that nothing of the load
 * but what the IR keeps (the parsed data, the loader's records) is still referenced while the
 * lowering runs: the collector's young-generation passes copy whatever is alive then.
 */
function loadIr(text: string, options: CompileOptions): { ir: IrDocument; warnings: Diagnostic[] } {
  const loaded = loadDocument(text, {
    file: options.file,
    strict: options.strict,
    level: 'full',
    graph: false,
    ...(options.vars !== undefined ? { vars: options.vars } : {}),
    ...(options.requireMacros !== undefined ? { requireMacros: options.requireMacros } : {}),
    ...(options.functions !== undefined ? { functions: options.functions } : {}),
  });
  if (loaded.errors.length > 0) {
    const first = loaded.errors[0]!;
    if (loaded.errors.length === 1) throw first;
    throw new StepforgeError(first.code, first.message, {
      location: first.location,
      source: first.source,
      hint: first.hint,
      // The errors themselves (errorsOf prints them with their excerpts); as JSON, each is its toJSON().
      details: { ...first.details, moreErrors: loaded.errors.slice(1) },
    });
  }
  if (!loaded.document)
    throw new StepforgeError('invalid_document', 'nothing to compile', { location: { file: options.file, line: 1, column: 1 } });
  const ir =
    loaded.format === 'contenox'
      ? contenoxToIr(loaded.document as ContenoxDocument, {
          name: workflowSlugOf((loaded.document as ContenoxDocument).id, options.file),
          file: options.file,
          source: text,
        })
      : loaded.format === 'chain'
        ? chainToIr(loaded.document as ChainDocument, {
            name: (loaded.document as ChainDocument).name ?? workflowNameFromFile(options.file),
            file: options.file,
            source: text,
            inputSchema: chainInputSchema((loaded.document as ChainDocument).input),
          })
        : dslToIr(loaded.document as DslDocument, { file: options.file, source: text });
  return { ir, warnings: loaded.warnings };
}

/** Compiles an IR document (front-ends and tests that build IR directly). */
export function compileIr(ir: IrDocument, options: { express?: boolean | 'requested' } = {}, warnings: Diagnostic[] = []): CompileResult {
  const requested = ir.deployment?.express === true;
  // Lowering is the same for both types: only the quotas, the blocker and the manifest differ.
  const lowered = lowerWorkflow(ir, {});
  if (options.express === true) checkExpress(ir.name, lowered.definition);
  const blocker = requested ? expressBlocker(lowered.definition) : undefined;
  const express = options.express === 'requested' ? requested && blocker === undefined : options.express === true;
  // Serialised once: the size quota and the manifest's placeholders and models all read it.
  const serialised = serialisedDefinition(lowered.definition);
  // The lowering decides how often a Task may run and which outputs the state machine reads inline.
  const quotas = checkQuotas(ir, lowered.definition, {
    express,
    definitionBytes: serialised.bytes,
    attemptsOf: worstCaseAttempts,
    readInline: (step) => lowered.stateReads.has(step.id) || routesOnItsAgents(step),
  });
  const manifest = buildStepManifest(ir, lowered, { express, ...(blocker !== undefined ? { blocker } : {}) }, serialised);
  const notes: string[] = [];
  if (lowered.addedEdges.length > 0) {
    notes.push(`the graph is not series-parallel: ${lowered.addedEdges.length} synchronisation edge(s) added`);
  } else notes.push('the graph is series-parallel: no synchronisation edges added');
  notes.push(`worst-case history events: ${quotas.worstCaseHistoryEvents}${express ? ' (express: not bounded)' : ' of 25000'}`);
  notes.push(`definition size: ${quotas.definitionBytes} bytes of 1048576`);
  if (quotas.largestPayloadStep)
    notes.push(`largest payload budget: ${Math.ceil(quotas.largestPayloadBytes / 1024)} KiB of 256 (step '${quotas.largestPayloadStep}')`);
  return {
    name: ir.name,
    displayName: ir.displayName ?? ir.name,
    asl: lowered.definition,
    manifest,
    explain: {
      addedEdges: copiedPairs(lowered.addedEdges),
      estimatedSlowdown: Math.round(lowered.estimatedSlowdown * 1000) / 1000,
      notes,
      quotas,
    },
    warnings,
    ir,
  };
}

function chainInputSchema(raw: unknown): InputSchema | undefined {
  // Chain documents carry the normalised schema; older loaders kept the section as written.
  if (raw !== null && typeof raw === 'object' && Array.isArray((raw as { fields?: unknown }).fields)) return raw as InputSchema;
  const parsed = InputSectionSpec.safeParse(raw ?? {});
  return parsed.success ? toInputSchema(parsed.data) : undefined;
}

/** A Contenox chain's workflow name: its `id` as a slug, else the file's name. */
function workflowSlugOf(id: string | undefined, file: string | undefined): string {
  return id !== undefined && id !== '' ? workflowSlug(id) : workflowNameFromFile(file);
}

/** Fresh copies of the pairs (the result is the caller's to change), made in a loop: see scheduleDag's DagScheduler. */
function copiedPairs<T>(pairs: readonly (readonly [T, T])[]): [T, T][] {
  const out = new Array<[T, T]>();
  for (const [a, b] of pairs) out.push([a, b]);
  return out;
}
