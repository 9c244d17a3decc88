import { parseDocument, stringify, type Document, type Node } from 'yaml';
import type { z } from 'zod';
import { SourceText, StepforgeError, isStepforgeError, type Diagnostic, type SourceLocation, didYouMean } from '@stepforge/contract';
import type { Expr, PathExpr, Template } from '../expr/ExpressionAst.js';
import { hasExpression, parseExpression, parseTemplate } from '../expr/parseTemplate.js';
import { templatePaths } from '../expr/collectReferences.js';
import type { GraphView } from '../graph/GraphView.js';
import { checkInputDefaults } from '../input/checkInputDefaults.js';
import { toInputSchema, type InputSchema } from '../input/InputSchema.js';
import type {
  DslAgentRole,
  DslDocument,
  DslResource,
  DslRetry,
  DslScope,
  DslSecret,
  DslStep,
  DslStepKind,
  DslTemplateField,
  DslValue,
} from './DslDocument.js';
import { valueAtPath } from '../source/zodIssues.js';
import { dslSchemas, type DslDocumentData } from './DslSchema.js';
import { plainDocumentData } from './plainStepData.js';
import { describeDslIssue, dslIssues } from './describeDslIssue.js';
import { knownFields } from './knownFields.js';
import { offsetLocation, PRECISE_PARSE_OPTIONS } from '../source/yamlNodes.js';
import { FastPathDeclined, type DataPath, type Locator } from '../source/Locator.js';
import { YamlDocumentLocator } from '../source/YamlDocumentLocator.js';
import { parseFastYaml, type FastYaml } from '../source/fastYaml.js';
import { dependencyCycle, readsItself, stepCycle } from '../checks/cycle.js';
import type { CheckFinding } from '../checks/CheckFinding.js';
import { declarationHint, unknownDeclaration, unknownReference, withSuggestion } from '../checks/unknownReference.js';
import { topologicalOrder } from '../graph/topologicalOrder.js';
import { stronglyConnectedComponents } from '../graph/stronglyConnectedComponents.js';
import { dslGraphView } from './dslGraphView.js';
import { yamlErrorMessage } from '../source/yamlErrorMessage.js';
import { unsupportedYamlKeys } from '../source/unsupportedYamlKey.js';
import { workflowSlug } from '../workflowSlug.js';
import { manifestTriggers } from '../checks/triggers.js';
import { aliasExpansionMessage, MAX_ALIAS_COUNT, yamlValueIssues } from '../source/yamlValueIssues.js';

/** Options for loadDslDocument. */
export interface LoadDslOptions {
  readonly file?: string;
  /** Unknown fields (and unknown input references) become errors instead of warnings. */
  readonly strict?: boolean;
  /** The project's user functions folder, when known: `function:` names are checked against its modules. */
  readonly functions?: UserFunctionsFolder;
  /** Build the result's graph view (default true); compiling a document reads none. */
  readonly graph?: boolean;
}

/**
 * A user functions folder as the caller sees it (the compiler does no I/O): its name as shown to a
 * person (project-relative), and which modules a `function:` name without an extension finds there.
 */
export interface UserFunctionsFolder {
  readonly shown: string;
  /** The module files (relative to the folder) `NAME.py` and `NAME.ts|.mts|.js|.mjs` that exist for `name`. */
  modules(name: string): readonly string[];
}

/** What loadDslDocument returns: the document and its graph when there are no errors. */
export interface DslLoadResult {
  readonly document?: DslDocument;
  readonly graph?: GraphView;
  readonly errors: StepforgeError[];
  readonly warnings: Diagnostic[];
}

/** Errors collected before giving up (graphql-js style cap), so one typo does not bury the rest. */
const MAX_ERRORS = 50;
/** The `document.dsl` versions this loader reads: major version 1 ("1", "1.0", "1.0.0", 1.0). */
const SUPPORTED_DSL_VERSION = /^1(\.\d+){0,2}$/;

/** `$secret:<id>` where id is a Secrets Manager / SSM style name. */
export const SECRET_BINDING = /^\$secret:([A-Za-z0-9][A-Za-z0-9/_+=.@:-]*)$/;

const AGENT_FIELDS = [
  'agent',
  'aggregator',
  'aggregator_agent',
  'entry_agent',
  'generator',
  'evaluator',
  'worker_agent',
  'judge_agent',
] as const;

/** The fields that list agents with roles (a list literal in a loop header is a new array on every call). */
const ROLE_LISTS = ['analysts', 'agents', 'specialists'] as const;

/** The declared agent a `res://` URI names when exactly one agent is declared with it (see agentsByUri). */
function agentNamedByUri(v: unknown, agents: Record<string, DslResource>): string | undefined {
  if (typeof v !== 'string' || !v.startsWith('res://') || Object.prototype.hasOwnProperty.call(agents, v)) return undefined;
  const owners = Object.values(agents).filter((a) => a.uri === v);
  return owners.length === 1 ? owners[0]!.name : undefined;
}

/** The warning a document without `document.version` gets (GraphN requires it; Stepforge does not). */
export const MISSING_VERSION = 'missing_version';

/**
 * The pass condition of a judge_loop that gives none, as the field's text (what it reads, for the
 * graph and the step's configuration). What runs is looser (`passByDefault`, see dslToIr): the
 * evaluator's trimmed answer starts with the word PASS.
 */
const EVALUATOR_SAYS_PASS = "${ input.evaluation == 'PASS' }";

/**
 * Loads a workflow DSL document from YAML text: parses with source ranges, checks the shape (zod),
 * every reference, secret and `${ }` expression, infers dependencies and rejects cycles. Every problem
 * is a StepforgeError with file:line:col; unknown fields are warnings unless `strict`.
 *
 * A valid document is loaded on the fast path (js-yaml); the first diagnostic, or anything the fast
 * path cannot locate exactly, sends it to the precise path (`yaml`), which reports every problem.
 */
export function loadDslDocument(text: string, options: LoadDslOptions = {}): DslLoadResult {
  const src = new SourceText(text, options.file);
  return loadDslDocumentFast(text, options, undefined, src) ?? loadDslDocumentPrecise(text, options, undefined, src);
}

/**
 * The fast path alone: the result when the document is valid and free of warnings (but `missing_version`) and every location
 * it needs was found exactly, else undefined. `parsed` reuses a parse of the same text (loadDocument).
 */
export function loadDslDocumentFast(
  text: string,
  options: LoadDslOptions = {},
  parsed?: FastYaml,
  src = new SourceText(text, options.file),
): DslLoadResult | undefined {
  const fast = parsed ?? parseFastYaml(text, src);
  if (!fast) return undefined;
  try {
    return new DslLoader(src, options, fast.locator, true).load(fast.data);
  } catch (e) {
    if (e instanceof Error && e.name === 'FastPathDeclined') return undefined;
    throw e;
  }
}

/**
 * The precise path alone: parses with `yaml` (source ranges for every node) and reports every error and
 * warning. `parsed` reuses a Document parsed from the same text with PRECISE_PARSE_OPTIONS.
 */
export function loadDslDocumentPrecise(
  text: string,
  options: LoadDslOptions = {},
  parsed?: Document.Parsed,
  src = new SourceText(text, options.file),
): DslLoadResult {
  const doc = parsed ?? parseDocument(text, PRECISE_PARSE_OPTIONS);
  const loader = new DslLoader(src, options, new YamlDocumentLocator((doc.contents ?? undefined) as Node | undefined, src), false);
  return loader.loadYaml(doc);
}

interface Ref {
  readonly target: string;
  readonly via: 'after' | 'reference';
  /**
   * Where the reference is: the node at `path`, or `[start, end)` inside its string. Located only
   * when an error needs it (mapping scalar offsets costs time on large documents).
   */
  readonly path: DataPath;
  readonly span?: { readonly text: string; readonly start: number; readonly end: number };
}

interface StepRec {
  readonly name: string;
  readonly kind: DslStepKind;
  readonly data: Record<string, unknown>;
  readonly location: SourceLocation;
  readonly parent?: StepRec;
  readonly scope: ScopeRec;
  readonly index: number;
  /** Data path of the step (`steps.<name>.do.<name>…`). */
  readonly path: readonly (string | number)[];
  readonly refs: Ref[];
  body?: ScopeRec;
  /** Filled while checking fields. */
  fields: Record<string, unknown>;
  /** Indices of the siblings this step depends on (each once; see ScopeRec.seen). */
  deps: number[];
}

/** What value() collects while walking a value's string leaves. */
interface ValueAcc {
  readonly path: readonly (string | number)[];
  readonly bound: ReadonlySet<string>;
  /** Where the step references found are recorded (the step's refs, or the workflow output's). */
  readonly refs: Ref[] | undefined;
  readonly templates: { path: (string | number)[]; template: Template; location: SourceLocation }[];
  readonly reads: string[];
  /** Where the value is (a template that is the whole value is there too). */
  readonly location: SourceLocation;
}

interface ScopeRec {
  readonly owner?: StepRec;
  readonly steps: StepRec[];
  /** Input names a loop binds for the steps in this scope (and deeper). */
  readonly bound: ReadonlySet<string>;
  edges: [number, number][];
  order: number[];
  /** Edges and dependencies recorded so far, as numbers (one Set per scope, not two per step). */
  readonly seen: Set<number>;
  /** A while body's steps that some sibling reads from the previous iteration (see carryAround). */
  carried?: string[];
}

class DslLoader {
  private readonly errors: StepforgeError[] = [];
  private readonly warnings: Diagnostic[] = [];
  private readonly byName = new Map<string, StepRec>();
  /** Steps by `output:` name, built at the first reference that names no step. */
  private byOutput: Map<string, StepRec[]> | undefined;
  private inputNames: Set<string> | undefined;
  private readonly dependencies: { from: string; to: string; via: 'after' | 'reference' }[] = [];
  /** The paths (joined by NUL) of steps whose shape errors were reported: stand-ins, never checked (see withoutBrokenSteps). */
  private readonly broken = new Set<string>();

  /** `fast`: give up (FastPathDeclined) at the first diagnostic instead of collecting them. */
  constructor(
    private readonly src: SourceText,
    private readonly options: LoadDslOptions,
    private readonly loc: Locator,
    private readonly fast: boolean,
  ) {}

  private error(
    code: string,
    message: string,
    location: SourceLocation | undefined,
    extra: { hint?: string; details?: Record<string, unknown> } = {},
  ): void {
    if (this.fast) throw new FastPathDeclined(code);
    this.errors.push(new StepforgeError(code, message, { location, source: this.src, ...extra }));
  }

  /** A check's finding, as an error at `location`. */
  private report(finding: CheckFinding, location: SourceLocation | undefined): void {
    this.error(finding.code, finding.message, location, {
      ...(finding.hint !== undefined ? { hint: finding.hint } : {}),
      ...(finding.details !== undefined ? { details: finding.details } : {}),
    });
  }

  /** A warning, or an error under --strict. */
  private warn(code: string, message: string, location: SourceLocation): void {
    if (this.fast) throw new FastPathDeclined(code);
    if (this.options.strict) this.error(code, message, location);
    else this.warnings.push({ severity: 'warning', code, message, location });
  }

  private result(document?: DslDocument): DslLoadResult {
    // Checks run section by section (shape, references, cycles); users read diagnostics top to bottom.
    // Sorted (stably) before the cap, so the errors kept are the first ones in the file.
    if (this.errors.length > 0 || !document)
      return { errors: this.errors.sort(byPosition).slice(0, MAX_ERRORS), warnings: this.warnings.sort(byPosition) };
    this.warnings.sort(byPosition);
    if (this.options.graph === false) return { document, errors: [], warnings: this.warnings };
    // `graph --json` prints extra graph fields after nodes/edges: the inferred dependencies, by name.
    const graph = { ...dslGraphView(document), dependencies: document.dependencies };
    return { document, graph, errors: [], warnings: this.warnings };
  }

  /** The precise path's start: YAML errors first, then the checks over the Document's data. */
  loadYaml(doc: Document.Parsed): DslLoadResult {
    const text = this.src.text;
    for (const e of doc.errors) {
      const [start, end] = e.pos;
      // Point at the offending token rather than the indentation before it.
      let at = start;
      while (text[at] === ' ' || text[at] === '\t') at++;
      if (at >= text.length || text[at] === '\n') at = start;
      this.error('yaml', yamlErrorMessage(e), offsetLocation(this.src, at, Math.max(end, at + 1)));
    }
    // Before toJS, which would stringify a complex key (and the yaml package print a warning about it),
    // throw on an alias without its anchor and loop on one inside its own value.
    for (const k of unsupportedYamlKeys(doc.contents))
      this.error('yaml', k.message, offsetLocation(this.src, k.offset, k.offset + k.length));
    if (this.errors.length > 0) return this.result();
    const values = yamlValueIssues(doc, text);
    for (const k of values.issues) this.error('yaml', k.message, offsetLocation(this.src, k.offset, k.offset + k.length));
    if (this.errors.length > 0) return this.result();
    let raw: unknown;
    try {
      raw = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (e) {
      // Aliases that expand too far: blame the first one (nothing else in a parsed document can throw here).
      const at = values.firstAlias ?? { offset: 0, length: 1 };
      this.error('yaml', aliasExpansionMessage(e), offsetLocation(this.src, at.offset, at.offset + at.length));
      return this.result();
    }
    return this.load(raw);
  }

  /** Checks parsed data (either parser's) and builds the document. */
  load(raw: unknown): DslLoadResult {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      this.error('schema', 'a workflow document must be a mapping with document: and steps:', this.locAt([]));
      return this.result();
    }
    if (this.listForm(raw as Record<string, unknown>)) return this.result();
    const data = this.checkShape(raw as Record<string, unknown>);
    if (!data) return this.result();
    return this.result(this.build(data));
  }

  // ---- shape (zod) ----------------------------------------------------------------------------

  /**
   * One error for each `steps:` or `do:` written as a list (`- name: … kind: …`) rather than as the
   * mapping of step name → definition, showing that mapping; true when there was one. The list's
   * items are not checked further: every one of them would be wrong only for being in a list.
   * (Also refuses a step named `__proto__`, which the schema would drop.)
   */
  private listForm(raw: Record<string, unknown>): boolean {
    let found = false;
    const visit = (steps: unknown, path: (string | number)[]): void => {
      if (Array.isArray(steps)) {
        found = true;
        const field = path[path.length - 1] === 'do' ? 'do' : 'steps';
        this.error(
          'schema',
          `${formatPath(path)} is a list (- name: … kind: …), but steps are written as a mapping of step name to step definition, with call: naming the kind`,
          this.locAt(path),
          {
            hint: `write it as:\n${mappingForm(field, steps).replace(/^/gm, '      ')}`,
          },
        );
        return;
      }
      if (steps === null || typeof steps !== 'object') return;
      // zod's records skip this key without a word (assigning it would set a prototype): say so here.
      if (Object.prototype.hasOwnProperty.call(steps, '__proto__')) {
        found = true;
        this.error('schema', `${formatPath(path)}: '__proto__' cannot be a step name; choose another`, this.keyLocAt(path, '__proto__'));
      }
      for (const [name, step] of Object.entries(steps as Record<string, unknown>)) {
        if (step !== null && typeof step === 'object' && 'do' in step) visit((step as Record<string, unknown>).do, [...path, name, 'do']);
      }
    };
    visit(raw.steps, ['steps']);
    return found;
  }

  private checkShape(raw: Record<string, unknown>): DslDocumentData | undefined {
    const plain = plainDocumentData(raw);
    if (plain) return plain;
    const { DslDocumentSpec } = dslSchemas();
    let parsed = DslDocumentSpec.safeParse(raw);
    if (parsed.success) return parsed.data;
    if (this.fast) throw new FastPathDeclined('schema');
    const issues = dslIssues(parsed.error.issues);
    const unknown = issues.filter((i) => i.code === 'unrecognized_keys');
    let refused = false;
    for (const issue of unknown) {
      const known = knownFields(DslDocumentSpec, raw, issue.path);
      for (const key of (issue as z.core.$ZodIssueUnrecognizedKeys).keys) {
        const where = issue.path.length > 0 ? ` in ${formatPath(issue.path)}` : '';
        const best = didYouMean(key, known);
        const message = `unknown field '${key}'${where}${best ? `; did you mean '${best}'?` : ''}`;
        // A trigger becomes an EventBridge rule as written: one with a misspelt field would deploy
        // another rule than the one meant, so it is refused even without strict (as in a chain).
        if (issue.path[0] === 'triggers') {
          this.error('unknown_field', message, this.loc.keyAt(issue.path, key) ?? this.locAt(issue.path));
          refused = true;
        } else this.warn('unknown_field', message, this.loc.keyAt(issue.path, key) ?? this.locAt(issue.path));
      }
    }
    const others = issues.filter((i) => i.code !== 'unrecognized_keys');
    for (const issue of others) this.reportIssue(issue, raw);
    if (refused) return undefined;
    // Only unknown fields: drop them and parse again so defaults are applied. Under --strict they are
    // errors already, but the rest of the document is still checked, so one pass reports everything.

    const cleaned = structuredClone(raw);
    for (const issue of unknown) {
      let target: unknown = cleaned;
      for (const seg of issue.path) target = (target as Record<PropertyKey, unknown>)[seg as PropertyKey];
      for (const key of (issue as z.core.$ZodIssueUnrecognizedKeys).keys) delete (target as Record<string, unknown>)[key];
    }
    if (others.length > 0) return this.withoutBrokenSteps(cleaned, others);
    parsed = DslDocumentSpec.safeParse(cleaned);
    if (parsed.success) return parsed.data;
    for (const issue of dslIssues(parsed.error.issues)) this.reportIssue(issue, cleaned);
    return undefined;
  }

  /**
   * The document with every step that has a shape error (already reported) replaced by a stand-in
   * that keeps its name and `output:`, so that the checks of the build stage (references, cycles,
   * agents, expressions) still run over the other steps and one pass reports every error, as a
   * type error in one step would otherwise hide a broken reference in another. The stand-ins are
   * `broken`: never checked themselves, and reading nothing. Undefined (nothing more is checked)
   * when an error lies outside the steps (a declaration's, whose removal would make every use of
   * it an error too) or when the document still does not parse.
   */
  private withoutBrokenSteps(cleaned: Record<string, unknown>, issues: readonly z.core.$ZodIssue[]): DslDocumentData | undefined {
    const stand = structuredClone(cleaned);
    for (const issue of issues) {
      const at = brokenStepPath(issue.path);
      if (!at) return undefined;
      const container = valueAtPath(stand, at.slice(0, -1));
      const key = at[at.length - 1] as string;
      if (!isMapping(container)) return undefined;
      const old = container[key];
      const output = isMapping(old) && typeof old.output === 'string' ? { output: old.output } : {};
      container[key] = { call: 'function', function: BROKEN_STEP, ...output };
      this.broken.add(at.join('\u0000'));
    }
    const parsed = dslSchemas().DslDocumentSpec.safeParse(stand);
    return parsed.success ? parsed.data : undefined;
  }

  private reportIssue(issue: z.core.$ZodIssue, raw: unknown): void {
    const field = issue.path[issue.path.length - 1];
    if (issue.code === 'invalid_key' && typeof field === 'string') {
      // A bad step name: at the key, in the key schema's words.
      const parent = issue.path.slice(0, -1);
      const why = issue.issues[0]?.message ?? issue.message;
      this.error('schema', `${formatPath(parent)}: step '${field}': ${why}`, this.loc.keyAt(parent, field) ?? this.locAt(parent));
      return;
    }
    const { location, depth } = this.loc.at(issue.path);
    const missing = depth < issue.path.length;
    if (missing && depth === issue.path.length - 1 && typeof field === 'string') {
      const owner = issue.path.length > 1 ? ` in ${formatPath(issue.path.slice(0, -1))}` : '';
      if (field === 'call') {
        // A step without call: is located at its name (the key), where the definition starts.
        const stepPath = issue.path.slice(0, -1);
        const name = stepPath[stepPath.length - 1];
        const at = typeof name === 'string' ? (this.loc.keyAt(stepPath.slice(0, -1), name) ?? location) : location;
        const def = (valueAtPath(raw, stepPath) ?? {}) as Record<string, unknown>;
        const misspelt = Object.keys(def).find((k) => k !== 'kind' && didYouMean(k, ['call']) === 'call');
        const was =
          typeof def.kind === 'string'
            ? `; its kind is written with call:, not kind: (call: ${String(def.kind)})`
            : misspelt !== undefined
              ? `; did you mean 'call' rather than '${misspelt}'?`
              : '';
        this.error(
          'schema',
          `missing required field 'call'${owner} (agent, function, mcp_tool, connector, conditional, for_each, while, parallel_analyzer, handoff_router or judge_loop)${was}`,
          at,
        );
        return;
      }
      // A field missing from a step: at the step's name (its key), where the definition starts.
      const stepPath = issue.path.slice(0, -1);
      const key = stepPath[stepPath.length - 1];
      const inStep =
        stepPath.length >= 2 &&
        typeof key === 'string' &&
        (stepPath[stepPath.length - 2] === 'steps' || stepPath[stepPath.length - 2] === 'do' || key === 'then' || key === 'else');
      this.error(
        'schema',
        `missing required field '${field}'${owner}`,
        (inStep ? this.loc.keyAt(stepPath.slice(0, -1), key) : undefined) ?? location,
      );
      return;
    }
    this.error('schema', `${formatPath(issue.path)}: ${describeDslIssue(issue, valueAtPath(raw, issue.path))}`, location);
  }

  // ---- building ---------------------------------------------------------------------------------

  private locAt(path: DataPath): SourceLocation {
    return this.loc.at(path).location;
  }

  /** Where a key that cannot be found points (the document start, as for a missing node). */
  private keyLocAt(path: DataPath, key: string): SourceLocation {
    return this.loc.keyAt(path, key) ?? offsetLocation(this.src, 0, 1);
  }

  private build(data: DslDocumentData): DslDocument | undefined {
    const agents = this.resources(data.agents, 'agents');
    const functions = this.resources(data.functions, 'functions');
    const mcpServers = this.resources(data.mcp_servers, 'mcp_servers');
    const secrets: Record<string, DslSecret> = {};
    for (const [name, binding] of Object.entries(data.secrets ?? {})) {
      const s = this.secret(name, binding, ['secrets', name]);
      if (s) secrets[name] = s;
    }
    const input = this.inputSchema(data);
    if (data.input !== undefined) this.inputNames = new Set(input.fields.map((f) => f.name));

    // Register every step (all scopes) first, so references may point forward and into outer scopes.
    const top = this.registerScope(data.steps as Record<string, Record<string, unknown>>, ['steps'], undefined, new Set());
    const decl = { agents, functions, mcpServers, secrets };
    for (const rec of this.byName.values())
      if (this.broken.size === 0 || !this.broken.has(rec.path.join('\u0000'))) this.checkStep(rec, decl);
    // Each reference of the output is located at its own `steps.<name>` (as a step's are), not at the first template.
    const outputRefs: Ref[] = [];
    const output = data.output === undefined ? undefined : this.value(data.output, ['output'], new Set(), outputRefs);
    for (const ref of outputRefs) {
      const r = ref.target;
      const t = this.byName.get(r);
      if (!t) this.unknownStep(r, this.refLocation(ref));
      else if (t.parent)
        this.error(
          'unknown_step',
          `output reads steps.${r}.output, but '${r}' is inside the body of '${t.parent.name}' and is not visible at the top level`,
          this.refLocation(ref),
          { hint: `read steps.${rootOf(t).name}.output instead` },
        );
    }
    for (const rec of this.byName.values()) this.resolveRefs(rec);
    this.orderScope(top);
    if (this.errors.length > 0) return undefined;

    const workflow = this.freeze(top);
    const dsl = String(data.document.dsl);
    if (!SUPPORTED_DSL_VERSION.test(dsl)) {
      this.warn(
        'unsupported_dsl_version',
        `document.dsl is '${dsl}', but this Stepforge reads DSL 1.x documents (e.g. "1.0"); it is read as 1.x`,
        this.locAt(['document', 'dsl']),
      );
    }
    // GraphN requires document.version; Stepforge runs without it (many documents omit it), so it
    // stays a warning even with strict, and the fast path reports it too rather than declining.
    if (data.document.version === undefined) {
      this.warnings.push({
        severity: 'warning',
        code: MISSING_VERSION,
        message: 'document has no version; GraphN requires document.version (e.g. version: "0.1.0")',
        location: this.locAt(['document']),
      });
    }
    return {
      format: 'dsl',
      ...(this.options.file !== undefined ? { file: this.options.file } : {}),
      name: workflowSlug(data.document.name),
      displayName: data.document.name,
      nameLocation: this.locAt(['document', 'name']),
      metadata: {
        dsl,
        name: data.document.name,
        ...(data.document.version !== undefined ? { version: String(data.document.version) } : {}),
        ...(data.document.description !== undefined ? { description: data.document.description } : {}),
      },
      agents,
      functions,
      mcpServers,
      secrets,
      input,
      ...(data.chat_hints !== undefined ? { chatHints: data.chat_hints } : {}),
      workflow,
      ...(output ? { output } : {}),
      dependencies: this.dependencies,
      ...(data.express !== undefined ? { express: data.express } : {}),
      ...(data.triggers !== undefined
        ? { triggers: manifestTriggers(data.triggers, (i) => this.loc.keyAt(['triggers', i], 'event_pattern')) }
        : {}),
    };
  }

  private resources(section: Record<string, unknown> | undefined, key: string): Record<string, DslResource> {
    const out: Record<string, DslResource> = {};
    for (const [name, v] of Object.entries(section ?? {})) {
      const location = this.keyLocAt([key], name);
      out[name] =
        typeof v === 'string' && v !== ''
          ? { name, uri: v, config: {}, location }
          : { name, config: (v || {}) as Record<string, unknown>, location };
    }
    return out;
  }

  private secret(name: string, binding: string, path: DataPath): DslSecret | undefined {
    const m = SECRET_BINDING.exec(binding);
    const location = this.locAt(path);
    if (!m) {
      this.error('invalid_secret', `secret binding '${binding}' is not of the form $secret:<id>`, location, {
        hint: 'write $secret:my-secret-id (letters, digits and / _ + = . @ : -)',
      });
      return undefined;
    }
    return { name, id: m[1]!, location };
  }

  private inputSchema(data: DslDocumentData): InputSchema {
    const schema = toInputSchema(data.input, (name) => this.keyLocAt(['input'], name));
    for (const m of checkInputDefaults(schema)) this.error('schema', m.message, this.locAt(['input', m.field, 'default']));
    return schema;
  }

  private registerScope(
    map: Record<string, Record<string, unknown>>,
    path: (string | number)[],
    owner: StepRec | undefined,
    bound: ReadonlySet<string>,
  ): ScopeRec {
    // Plain literals (no conditional spreads) keep these records in V8's fast object layout.
    const scope: ScopeRec = { owner, steps: [], bound, edges: [], order: [], seen: new Set() };
    // The mapping's source order (object keys keep insertion order: step names are never integers).
    for (const name in map) {
      const data = map[name]!;
      // concat, not a spread into a literal: see stepRec.
      const stepPath = path.concat(name);
      // A step is located at its name, the key of its definition.
      const location = this.keyLocAt(path, name);
      const rec = stepRec(name, data, location, owner, scope, scope.steps.length, stepPath);
      const prior = this.byName.get(name);
      if (prior) {
        this.error('duplicate_step', `duplicate step name '${name}' (first defined at line ${prior.location.line})`, location, {
          hint: 'step names must be unique in the whole document, including loop bodies',
        });
        continue;
      }
      this.byName.set(name, rec);
      scope.steps.push(rec);
      this.registerBody(rec, bound);
    }
    return scope;
  }

  /**
   * A conditional's inline `then:` / `else:` steps (each one step definition, as GraphN writes
   * them) as a scope of their own, named `<conditional>.then` / `<conditional>.else`: a name no
   * step of the document can have (step names have no dot), so none is shadowed or clashes.
   */
  private registerBranches(owner: StepRec, bound: ReadonlySet<string>): ScopeRec {
    const scope: ScopeRec = { owner, steps: [], bound, edges: [], order: [], seen: new Set() };
    for (const branch of ['then', 'else'] as const) {
      const data = owner.data[branch];
      if (!isMapping(data)) continue;
      const name = `${owner.name}.${branch}`;
      const rec: StepRec = {
        name,
        kind: data.call as DslStepKind,
        data,
        location: this.keyLocAt(owner.path, branch),
        parent: owner,
        scope,
        index: scope.steps.length,
        path: [...owner.path, branch],
        refs: [],
        fields: {},
        deps: [],
      };
      this.byName.set(name, rec);
      scope.steps.push(rec);
      this.registerBody(rec, bound);
    }
    return scope;
  }

  /** The steps a step holds: a loop's `do:` (binding its loop variable), a conditional's branches. */
  private registerBody(rec: StepRec, bound: ReadonlySet<string>): void {
    const data = rec.data;
    if (data.do !== null && typeof data.do === 'object') {
      const inner = new Set(bound);
      if (rec.kind === 'for_each') inner.add(data.as as string);
      if (rec.kind === 'while') inner.add('iteration');
      rec.body = this.registerScope(data.do as Record<string, Record<string, unknown>>, [...rec.path, 'do'], rec, inner);
    }
    if (rec.kind === 'conditional' && (isMapping(data.then) || isMapping(data.else))) rec.body = this.registerBranches(rec, bound);
  }

  private checkStep(
    rec: StepRec,
    decl: {
      agents: Record<string, DslResource>;
      functions: Record<string, DslResource>;
      mcpServers: Record<string, DslResource>;
      secrets: Record<string, DslSecret>;
    },
  ): void {
    // Loops and helper methods rather than closures: this runs once per step of large documents.
    const d = rec.data;
    const path = rec.path;
    this.agentsByUri(d, decl.agents);
    if (rec.kind === 'parallel_analyzer') {
      // GraphN spells it two ways: analysts [{agent, role}] + aggregator, or agents [{agent, focus}] + aggregator_agent.
      this.oneOf(rec, 'analysts', 'agents');
      rec.fields.aggregator = d[this.oneOf(rec, 'aggregator', 'aggregator_agent')];
    }
    if (rec.kind === 'judge_loop') {
      rec.fields.generator = d[this.oneOf(rec, 'generator', 'worker_agent')];
      rec.fields.evaluator = d[this.oneOf(rec, 'evaluator', 'judge_agent')];
    }
    for (const k of AGENT_FIELDS)
      if (typeof d[k] === 'string' && (rec.kind !== 'agent' || k === 'agent')) this.checkAgent(d[k], decl.agents, [...path, k]);
    for (const list of ROLE_LISTS) {
      const roles = d[list] as { agent: string; role?: string; focus?: string }[] | undefined;
      if (!Array.isArray(roles) || (list === 'agents' && rec.kind !== 'parallel_analyzer')) continue;
      const out: DslAgentRole[] = [];
      const firstWithRole = new Map<string, number>();
      for (let i = 0; i < roles.length; i++) {
        const r = roles[i]!;
        const loc = this.locAt([...path, list, i, 'agent']);
        this.checkAgent(r.agent, decl.agents, loc);
        // An analyst without a role (GraphN's agents: [{agent, focus}]) is known by its agent's name.
        const role = r.role ?? r.agent;
        out.push(r.focus !== undefined ? { agent: r.agent, role, focus: r.focus, location: loc } : { agent: r.agent, role, location: loc });
        // A router hands off by role, so a repeated one could never be reached. An analyzer's
        // analyses are collected per analyst (analystKeys), so its roles may repeat, as GraphN's do.
        if (list !== 'specialists') continue;
        const first = firstWithRole.get(role);
        if (first === undefined) firstWithRole.set(role, i);
        else this.duplicateRole(path, first, i, role);
      }
      rec.fields[list === 'specialists' ? 'specialists' : 'analysts'] = out;
    }
    const fn = rec.kind === 'function' ? unknownReference(d.function as string, decl.functions) : undefined;
    if (fn) this.report(unknownDeclaration('function', fn), this.locAt([...path, 'function']));
    // The path is built only when there is a folder to look in (this runs for every function step).
    if (rec.kind === 'function' && typeof d.function === 'string' && this.options.functions !== undefined)
      this.checkFunctionModules(d.function, [...path, 'function']);
    const server = rec.kind === 'mcp_tool' ? unknownReference(d.server as string, decl.mcpServers) : undefined;
    if (server) this.report(unknownDeclaration('MCP server', server), this.locAt([...path, 'server']));
    // Step secrets: NAME: $secret:<id> | NAME: <declared secret>, or a list of either.
    // `new Array()`, not `[]`, for what the step keeps: see stepRec.
    const secrets = new Array<DslSecret>();
    const sec = d.secrets;
    if (Array.isArray(sec)) {
      for (let i = 0; i < sec.length; i++) {
        const v = sec[i] as string;
        this.bindSecret(secrets, decl.secrets, v.startsWith('$secret:') ? v.slice(8) : v, v, [...path, 'secrets', i]);
      }
    } else if (sec && typeof sec === 'object') {
      for (const [k, v] of Object.entries(sec as Record<string, string>))
        this.bindSecret(secrets, decl.secrets, k, v, [...path, 'secrets', k]);
    }
    rec.fields.secrets = secrets;

    // Expressions: what the step (not its body) reads.
    const bound = rec.scope.bound;
    if (d.input !== undefined) rec.fields.input = this.value(d.input, path.concat('input'), bound, rec.refs);
    if (d.input_template !== undefined)
      rec.fields.inputTemplate = this.value(d.input_template, path.concat('input_template'), bound, rec.refs);
    if (d.when !== undefined) rec.fields.when = this.condition(d.when as string | boolean, [...path, 'when'], bound, rec);
    if (rec.kind === 'conditional')
      rec.fields.condition = this.condition(d.condition as string | boolean, [...path, 'condition'], bound, rec);
    if (rec.kind === 'while') {
      // The condition is checked after each iteration: it may read the body's steps and input.iteration.
      const inner = new Set(bound).add('iteration');
      rec.fields.condition = this.condition(d.condition as string | boolean, [...path, 'condition'], inner, rec, rec.body);
    }
    if (rec.kind === 'judge_loop') {
      const inner = new Set(bound).add('evaluation').add('candidate').add('iteration');
      rec.fields.passCondition = this.condition(
        (d.pass_condition ?? EVALUATOR_SAYS_PASS) as string | boolean,
        [...path, 'pass_condition'],
        inner,
        rec,
      );
    }
    if (rec.kind === 'for_each') {
      const items = d.items;
      rec.fields.items = Array.isArray(items)
        ? { literal: items, location: this.locAt([...path, 'items']) }
        : this.condition(items as string, [...path, 'items'], bound, rec);
    }
    const after = d.after === undefined ? new Array<string>() : Array.isArray(d.after) ? (d.after as string[]) : [d.after as string];
    rec.fields.after = after;
    for (let i = 0; i < after.length; i++) {
      rec.refs.push({ target: after[i]!, via: 'after', path: Array.isArray(d.after) ? [...path, 'after', i] : [...path, 'after'] });
    }
  }

  /** Roles key a router's specialists: it hands off by role, so a second `role: a` could never be reached. */
  private duplicateRole(path: DataPath, first: number, at: number, role: string): void {
    const firstLine = this.locAt([...path, 'specialists', first, 'role']).line;
    this.error(
      'schema',
      `${formatPath([...path, 'specialists', at, 'role'])}: duplicate role '${role}' (first used by specialists[${first}] at line ${firstLine}); the router hands off by role, so this specialist could never be reached`,
      this.locAt([...path, 'specialists', at, 'role']),
      {
        hint: 'give each of the specialists its own role',
      },
    );
  }

  /**
   * Which of a field's two spellings (`analysts`/`agents`, `generator`/`worker_agent`…) a step uses:
   * exactly one must be there. Reports a missing or doubled one and returns the name to read.
   */
  private oneOf(rec: StepRec, field: string, other: string): string {
    const d = rec.data;
    if (d[field] !== undefined && d[other] !== undefined) {
      this.error(
        'schema',
        `${formatPath([...rec.path, other])}: write either ${field}: or ${other}: (two spellings of one field), not both`,
        this.keyLocAt(rec.path, other),
      );
    } else if (d[field] === undefined && d[other] === undefined) {
      this.error('schema', `missing required field '${field}' in ${formatPath(rec.path)} (or its other spelling '${other}')`, rec.location);
    }
    return d[field] !== undefined ? field : other;
  }

  /**
   * A step may name an agent by the `res://` URI it is declared with (`agent: res://agents/writer`
   * where `agents: {Writer: res://agents/writer}`): that is the same agent, so the step's fields are
   * rewritten to its declared name before they are checked and kept. A URI several agents are
   * declared with names none of them (unknown_agent, whose hint lists them).
   */
  private agentsByUri(d: Record<string, unknown>, agents: Record<string, DslResource>): void {
    for (const k of AGENT_FIELDS) {
      const name = agentNamedByUri(d[k], agents);
      if (name !== undefined) d[k] = name;
    }
    for (const list of ROLE_LISTS) {
      const roles = d[list];
      if (!Array.isArray(roles)) continue;
      for (const r of roles) {
        if (r === null || typeof r !== 'object') continue;
        const name = agentNamedByUri((r as { agent?: unknown }).agent, agents);
        if (name !== undefined) (r as { agent: string }).agent = name;
      }
    }
  }

  /** An `unknown_agent` error unless `name` is declared; `at` is located only then. */
  private checkAgent(name: string, agents: Record<string, DslResource>, at: DataPath | SourceLocation): void {
    const ref = unknownReference(name, agents);
    if (!ref) return;
    const finding = unknownDeclaration('agent', ref);
    const sharing = Object.values(agents)
      .filter((a) => a.uri === name)
      .map((a) => `'${a.name}'`);
    const hint = sharing.length > 1 ? `${sharing.join(' and ')} are each declared as ${name}: name one of them` : finding.hint;
    this.report({ ...finding, hint }, Array.isArray(at) ? this.locAt(at) : (at as SourceLocation));
  }

  /** Binds one step secret (`$secret:<id>` or a declared secret's name) or reports it. */
  private bindSecret(out: DslSecret[], declared: Record<string, DslSecret>, name: string, value: string, p: DataPath): void {
    if (value.startsWith('$secret:')) {
      const bound = this.secret(name, value, p);
      if (bound) out.push(bound);
    } else if (Object.prototype.hasOwnProperty.call(declared, value)) {
      out.push({ ...declared[value]!, name, location: this.locAt(p) });
    } else {
      this.error('invalid_secret', `'${value}' is neither a $secret:<id> binding nor a declared secret`, this.locAt(p), {
        hint:
          Object.keys(declared).length > 0
            ? declarationHint(withSuggestion(value, Object.keys(declared)), 'secrets')
            : 'write $secret:<id>',
      });
    }
  }

  /** Where a reference is, for an error about it. */
  private refLocation(ref: Ref): SourceLocation {
    return ref.span ? this.loc.inString(ref.path, ref.span.text, ref.span.start, ref.span.end) : this.locAt(ref.path);
  }

  /** Parses a scalar's template with offsets mapped to the source; pushes `expression` errors. */
  private template(text: string, path: DataPath, bare: boolean): Template | undefined {
    try {
      if (bare && !hasExpression(text)) {
        const expr = parseExpression(text);
        return { kind: 'template', text, parts: [{ kind: 'expr', expr, offset: 0, end: text.length }], whole: true };
      }
      return parseTemplate(text);
    } catch (e) {
      if (!isStepforgeError(e) || e.code !== 'expression') throw e;
      const offset = Number(e.details?.offset ?? 0);
      const length = Number(e.details?.length ?? 1);
      if (this.fast) throw new FastPathDeclined('expression');
      this.error('expression', e.message, this.loc.inString(path, text, offset, offset + length));
      return undefined;
    }
  }

  /** A condition-like field: boolean, bare expression or `${ }` template. */
  private condition(
    v: string | boolean,
    path: (string | number)[],
    bound: ReadonlySet<string>,
    rec: StepRec,
    body?: ScopeRec,
  ): DslTemplateField {
    const location = this.locAt(path);
    if (typeof v === 'boolean') {
      const expr: Expr = { kind: 'literal', value: v, offset: 0, length: String(v).length };
      return {
        text: `\${ ${v} }`,
        template: { kind: 'template', text: String(v), parts: [{ kind: 'expr', expr, offset: 0, end: String(v).length }], whole: true },
        location,
      };
    }
    const t = this.template(v, path, true) ?? emptyTemplate(v);
    const aliased: Aliased[] = [];
    this.readsOf(t, path, bound, rec.refs, body, aliased);
    if (aliased.length === 0) return { text: hasExpression(v) ? v : `\${ ${v} }`, template: t, location };
    // Lowering parses a bare expression's `${ }` text again, and reads a template's text: both name the step.
    const text = withStepNames(v, aliased);
    return hasExpression(v)
      ? { text, template: parseTemplate(text), location }
      : { text: `\${ ${text} }`, template: this.template(text, path, true)!, location };
  }

  /** A value whose string leaves may hold templates (input, input_template, output). */
  private value(v: unknown, path: readonly (string | number)[], bound: ReadonlySet<string>, refs?: Ref[]): DslValue {
    // Assigned onto `{}` and `new Array()`, not literals with fields: see stepRec.
    const acc = {} as { -readonly [K in keyof ValueAcc]: ValueAcc[K] };
    acc.path = path;
    acc.bound = bound;
    acc.refs = refs;
    acc.templates = new Array<ValueAcc['templates'][number]>();
    acc.reads = new Array<string>();
    acc.location = this.locAt(path);
    const out = {} as { -readonly [K in keyof DslValue]: DslValue[K] };
    out.value = this.valueTemplates(acc, v, new Array<string | number>());
    out.templates = acc.templates;
    out.reads = acc.reads;
    out.location = acc.location;
    return out;
  }

  /**
   * Parses the templates among the string leaves of `x` (at `p` below `acc.path`); returns `x`, or a
   * copy whose templates name steps read by their `output:` name by the step's name (see stepNamed).
   */
  private valueTemplates(acc: ValueAcc, x: unknown, p: (string | number)[]): unknown {
    if (typeof x === 'string') {
      if (!hasExpression(x) && !x.includes('$${')) return x;
      // A string value (a prompt, most often) is its own template: its path and location are the value's.
      const whole = p.length === 0;
      // concat, not spreads into a literal (see stepRec): the paths live in the templates and references.
      const at = whole ? acc.path : acc.path.concat(p);
      const t = this.template(x, at, false);
      if (!t) return x;
      const aliased: Aliased[] = [];
      for (const r of this.readsOf(t, at, acc.bound, acc.refs, undefined, aliased)) if (!acc.reads.includes(r)) acc.reads.push(r);
      const location = whole ? acc.location : this.locAt(at);
      if (aliased.length === 0) {
        acc.templates.push(valueTemplate(p, t, location));
        return x;
      }
      const text = withStepNames(x, aliased);
      acc.templates.push(valueTemplate(p, parseTemplate(text), location));
      return text;
    } else if (Array.isArray(x)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < x.length; i++) {
        const y = this.valueTemplates(acc, x[i], p.concat(i));
        if (y !== x[i]) (out ??= [...x])[i] = y;
      }
      return out ?? x;
    } else if (x !== null && typeof x === 'object') {
      let out: Record<string, unknown> | undefined;
      for (const [k, y] of Object.entries(x)) {
        const z = this.valueTemplates(acc, y, p.concat(k));
        if (z !== y) (out ??= { ...(x as Record<string, unknown>) })[k] = z;
      }
      return out ?? x;
    }
    return x;
  }

  /** Records a template's step references in `refs` and checks its input references; returns step names. */
  private readsOf(t: Template, path: DataPath, bound: ReadonlySet<string>, refs?: Ref[], body?: ScopeRec, aliased?: Aliased[]): string[] {
    const names: string[] = [];
    for (const p of templatePaths(t)) {
      if (p.root.kind === 'step') {
        const target = this.stepNamed(p.root.step, p, t.text, path);
        // An output: name several steps share: already reported.
        if (target === undefined) continue;
        // Read from here on (lowering, the graph, the IR) as the step's own name.
        if (target !== p.root.step) {
          aliased?.push({ offset: p.offset, length: p.length, from: p.root.step, to: target });
          (p.root as { step: string }).step = target;
        }
        if (!names.includes(target)) names.push(target);
        // A while condition may read its own body's steps: they finished when it is evaluated.
        if (body && body.steps.some((s) => s.name === target)) continue;
        refs?.push(reference(target, path, t.text, p.offset, p.offset + p.length));
      } else if (this.inputNames && typeof p.segments[0] === 'string') {
        const name = p.segments[0];
        if (!this.inputNames.has(name) && !bound.has(name)) {
          const spelled = p.implicitInput ? name : `input.${name}`;
          this.warn(
            'unknown_input',
            `'${spelled}' is not a declared input field${bound.size > 0 ? ` nor bound by an enclosing loop (${[...bound].join(', ')})` : ''}`,
            this.loc.inString(path, t.text, p.offset, p.offset + p.length),
          );
        }
      }
    }
    return names;
  }

  /**
   * The step a `steps.<name>` reference names: the step of that name or, when there is none, the one
   * step whose `output:` (GraphN's canvas node id) is that name, as GraphN's conditional note reads
   * `steps.should_summarize.output` for a conditional with `output: should_summarize`. A name that is
   * the output of several steps names none of them: an unknown_step error that lists them, and undefined.
   */
  private stepNamed(name: string, p: PathExpr, text: string, path: DataPath): string | undefined {
    if (this.byName.has(name)) return name;
    const owners = this.outputOwners().get(name);
    if (!owners) return name;
    if (owners.length === 1) return owners[0]!.name;
    this.ambiguousOutput(
      name,
      owners,
      this.loc.inString(path, text, p.offset, p.offset + p.length),
      `read one of them by its step name: ${owners.map((o) => `steps.${o.name}.output`).join(' or ')}`,
    );
    return undefined;
  }

  /** An output name that several steps declare names none of them. */
  private ambiguousOutput(name: string, owners: readonly StepRec[], location: SourceLocation, hint: string): void {
    const listed = owners.map((o) => `'${o.name}'`);
    this.error(
      'unknown_step',
      `no step is named '${name}', and ${listed.slice(0, -1).join(', ')} and ${listed[listed.length - 1]} all have output: ${name}`,
      location,
      { hint },
    );
  }

  /** Steps by their `output:` names (only names that differ from the step's own). */
  private outputOwners(): Map<string, StepRec[]> {
    if (this.byOutput) return this.byOutput;
    const m = new Map<string, StepRec[]>();
    for (const rec of this.byName.values()) {
      const out = rec.data.output;
      if (typeof out !== 'string' || out === rec.name) continue;
      const list = m.get(out);
      if (list) list.push(rec);
      else m.set(out, [rec]);
    }
    return (this.byOutput = m);
  }

  /**
   * A `function:` name without an extension that finds both a Python and a JavaScript module in the
   * functions folder: the runtime refuses it (ConfigError) rather than pick one, so it is reported
   * here, before anything runs.
   */
  private checkFunctionModules(name: string, path: DataPath): void {
    const folder = this.options.functions;
    if (!folder || /\.(py|m?[jt]s)(#|$)/.test(name)) return;
    const file = name.split('#', 1)[0]!;
    const found = folder.modules(file);
    const py = found.find((f) => f.endsWith('.py'));
    const js = found.find((f) => !f.endsWith('.py'));
    if (py === undefined || js === undefined) return;
    const ext = js.slice(js.lastIndexOf('.'));
    this.error('ambiguous_function', `function '${file}' is ambiguous: ${folder.shown} has both ${py} and ${js}`, this.locAt(path), {
      hint: `name the one to run with its extension (function: ${file}.py or function: ${file}${ext}, declared under functions: with the same name), or remove the other`,
      details: { function: file, candidates: [py, js] },
    });
  }

  private unknownStep(target: string, location: SourceLocation): void {
    this.report(unknownDeclaration('step', withSuggestion(target, this.byName.keys())), location);
  }

  /** Turns references into edges of the right scope (lifting nested readers to their ancestor). */
  private resolveRefs(rec: StepRec): void {
    for (const ref of rec.refs) {
      // `after:` may name a step by its `output:` (GraphN's canvas node id), as `steps.<name>` may.
      const owners = this.byName.has(ref.target) || ref.via !== 'after' ? undefined : this.outputOwners().get(ref.target);
      if (owners && owners.length > 1) {
        this.ambiguousOutput(ref.target, owners, this.refLocation(ref), 'name it in after: by its step name');
        continue;
      }
      const t = this.byName.get(ref.target) ?? owners?.[0];
      if (!t) {
        this.unknownStep(ref.target, this.refLocation(ref));
        continue;
      }
      // Find rec or its ancestor that is a sibling of t.
      let u: StepRec | undefined = rec;
      while (u && u.scope !== t.scope) u = u.parent;
      if (!u) {
        this.error(
          'unknown_step',
          `step '${ref.target}' is inside the body of '${t.parent!.name}' and is not visible from '${rec.name}'`,
          this.refLocation(ref),
          {
            hint: 'a step can read its siblings and the steps of enclosing scopes',
          },
        );
        continue;
      }
      if (u === t) {
        if (readsOwnLatest(t, rec, ref)) continue;
        this.report(readsItself(t.name, rec.name), this.refLocation(ref));
        continue;
      }
      // t and u are siblings: (t, u) numbers a pair of the scope; ×3 leaves room for the edge and both vias.
      const pair = (t.index * t.scope.steps.length + u.index) * 3;
      if (!t.scope.seen.has(pair)) {
        t.scope.seen.add(pair);
        u.deps.push(t.index);
        // A pair made by index, not an array literal: see stepRec.
        const edge = new Array<number>() as unknown as [number, number];
        edge.push(t.index, u.index);
        t.scope.edges.push(edge);
      }
      const key = pair + (ref.via === 'reference' ? 2 : 1);
      if (!t.scope.seen.has(key)) {
        t.scope.seen.add(key);
        const dependency = {} as { from: string; to: string; via: 'after' | 'reference' };
        dependency.from = t.name;
        dependency.to = u.name;
        dependency.via = ref.via;
        this.dependencies.push(dependency);
      }
    }
  }

  private orderScope(scope: ScopeRec): void {
    // Each edge is already recorded once (resolveRefs keeps a pair set per scope); only sort them.
    scope.edges.sort(byEdge);
    const order =
      topologicalOrder(scope.steps.length, scope.edges) ?? (scope.owner?.kind === 'while' ? this.carryAround(scope) : undefined);
    if (!order) {
      const cycle = dependencyCycle(scope.steps.length, scope.edges, (i) => scope.steps[i]!.name, true)!;
      this.report(stepCycle(cycle), scope.steps[cycle.nodes[0]!]!.location);
    } else {
      scope.order = order;
    }
    for (const s of scope.steps) if (s.body) this.orderScope(s.body);
  }

  /**
   * GraphN's while shares its context between iterations: each sees the outputs of the previous ones.
   * So in a while body whose references go round in a cycle, each reference on the cycle to a sibling
   * written further down the body (the back edge) reads that sibling's output from the previous
   * iteration, null in the first: it is not a dependency, and the reader runs before the sibling
   * instead. A reference to a later sibling off every cycle stays a dependency, as before; `after:` is
   * an order, never such a read, so a cycle it closes stays an error. Returns the body's order then.
   */
  private carryAround(scope: ScopeRec): number[] | undefined {
    const n = scope.steps.length;
    const succ: number[][] = [];
    for (let i = 0; i < n; i++) succ.push([]);
    for (const [from, to] of scope.edges) succ[from]!.push(to);
    const { componentOf } = stronglyConnectedComponents(succ);
    const kept: [number, number][] = [];
    const back: [number, number][] = [];
    for (const e of scope.edges) {
      const [target, reader] = e;
      const viaAfter = scope.seen.has((target * n + reader) * 3 + 1);
      if (target > reader && componentOf[target] === componentOf[reader] && !viaAfter) back.push(e);
      else kept.push(e);
    }
    if (back.length === 0) return undefined;
    // The reader runs first: what it reads then is the value the previous iteration left.
    const edges = [...kept];
    for (const [target, reader] of back)
      if (!edges.some(([a, b]) => a === reader && b === target)) edges.push([reader, target] as [number, number]);
    edges.sort(byEdge);
    const order = topologicalOrder(n, edges);
    if (!order) return undefined;
    scope.edges = edges;
    const carried = new Set<string>();
    for (const [target, reader] of back) {
      const r = scope.steps[reader]!;
      r.deps = r.deps.filter((d) => d !== target);
      carried.add(scope.steps[target]!.name);
    }
    scope.carried = [...carried];
    return order;
  }

  // ---- freezing into the public document model ---------------------------------------------------

  private freeze(scope: ScopeRec): DslScope {
    // A loop, not map: an arrow made per call would hold the optimised freezeStep (see scheduleDag's DagScheduler).
    const steps = new Array<DslStep>();
    for (const r of scope.steps) steps.push(this.freezeStep(r));
    const resultStep = scope.order[scope.order.length - 1];
    return { steps, edges: scope.edges, order: scope.order, ...(resultStep !== undefined ? { resultStep } : {}) };
  }

  private freezeStep(r: StepRec): DslStep {
    const d = r.data;
    const f = r.fields;
    // Filled field by field rather than spread together: same key order, a fraction of the
    // allocations (this runs once per step, and large documents have thousands).
    const step: Record<string, unknown> = {};
    step.name = r.name;
    step.kind = r.kind;
    if (typeof d.description === 'string') step.description = d.description;
    if (r.parent) step.parent = r.parent.name;
    if (f.input) step.input = f.input;
    if (f.inputTemplate) step.inputTemplate = f.inputTemplate;
    step.secrets = f.secrets;
    step.output = d.output ?? r.name;
    step.after = f.after;
    if (f.when) step.when = f.when;
    if (d.retry !== undefined) step.retry = d.retry;
    // Most steps read one or two others: sort allocates a work array even for those.
    const deps = r.deps;
    if (deps.length === 2) {
      if (deps[0]! > deps[1]!) deps.reverse();
    } else if (deps.length > 2) deps.sort(ascending);
    const names = new Array<string>();
    for (const i of deps) names.push(r.scope.steps[i]!.name);
    step.dependencies = names;
    step.location = r.location;
    switch (r.kind) {
      case 'agent':
        step.agent = d.agent;
        break;
      case 'function':
        step.function = d.function;
        break;
      case 'mcp_tool':
        step.server = d.server;
        step.tool = d.tool;
        break;
      case 'connector':
        step.connector = d.connector;
        step.action = d.action;
        break;
      case 'conditional': {
        step.condition = f.condition;
        const branches = r.body ? this.freeze(r.body) : undefined;
        if (branches) {
          step.branches = branches;
          for (const b of branches.steps) step[b.name.endsWith('.then') ? 'then' : 'else'] = b;
        }
        break;
      }
      case 'for_each': {
        const parallel = d.parallel as boolean;
        step.items = f.items;
        step.as = d.as;
        step.maxIterations = d.max_iterations;
        step.parallel = parallel;
        step.maxConcurrency = parallel ? 10 : 1;
        step.do = this.freeze(r.body!);
        break;
      }
      case 'while':
        step.condition = f.condition;
        step.maxIterations = d.max_iterations;
        step.do = this.freeze(r.body!);
        if (r.body!.carried) step.carried = r.body!.carried;
        break;
      case 'parallel_analyzer':
        step.analysts = f.analysts;
        step.aggregator = f.aggregator;
        break;
      case 'handoff_router':
        step.entryAgent = d.entry_agent;
        step.specialists = f.specialists;
        break;
      case 'judge_loop':
        step.generator = f.generator;
        step.evaluator = f.evaluator;
        step.passCondition = f.passCondition;
        step.passByDefault = d.pass_condition === undefined;
        step.maxIterations = d.max_iterations;
        break;
    }
    return step as unknown as DslStep;
  }
}

/**
 * A step's record. The records, like the templates, references and locations the loader keeps for
 * every step, are assigned onto `{}` and `new Array()` rather than written as literals with fields:
 * V8 pretenures the allocation site of a literal whose objects outlive a scavenge, as these do while
 * the document loads, and then every compile put them in the old space, where they stay until a
 * mark-compact, on fresh pages each time (see docs/performance.md). The key order is the literal's.
 */
function stepRec(
  name: string,
  data: Record<string, unknown>,
  location: SourceLocation,
  parent: StepRec | undefined,
  scope: ScopeRec,
  index: number,
  path: readonly (string | number)[],
): StepRec {
  const rec = {} as { -readonly [K in keyof StepRec]: StepRec[K] };
  rec.name = name;
  rec.kind = data.call as DslStepKind;
  rec.data = data;
  rec.location = location;
  rec.parent = parent;
  rec.scope = scope;
  rec.index = index;
  rec.path = path;
  rec.refs = new Array<Ref>();
  rec.fields = {};
  rec.deps = new Array<number>();
  return rec;
}

/** A template found in a value, with its path below the value and its location (see stepRec). */
function valueTemplate(path: (string | number)[], template: Template, location: SourceLocation): ValueAcc['templates'][number] {
  const entry = {} as { path: (string | number)[]; template: Template; location: SourceLocation };
  entry.path = path;
  entry.template = template;
  entry.location = location;
  return entry;
}

/** A `steps.<name>` reference inside the string at `path`, `[start, end)` of `text` (see stepRec). */
function reference(target: string, path: DataPath, text: string, start: number, end: number): Ref {
  const span = {} as { text: string; start: number; end: number };
  span.text = text;
  span.start = start;
  span.end = end;
  const ref = {} as { -readonly [K in keyof Ref]: Ref[K] };
  ref.target = target;
  ref.via = 'reference';
  ref.path = path;
  ref.span = span;
  return ref;
}

function byPosition(a: { readonly location?: SourceLocation }, b: { readonly location?: SourceLocation }): number {
  return (a.location?.line ?? 0) - (b.location?.line ?? 0) || (a.location?.column ?? 0) - (b.location?.column ?? 0);
}

function byEdge(x: readonly [number, number], y: readonly [number, number]): number {
  return x[0] - y[0] || x[1] - y[1];
}

function ascending(a: number, b: number): number {
  return a - b;
}

function rootOf(r: StepRec): StepRec {
  let x = r;
  while (x.parent) x = x.parent;
  return x;
}

function emptyTemplate(text: string): Template {
  return { kind: 'template', text, parts: [], whole: false };
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out || '(document)';
}

/**
 * The mapping form of steps written as a list, as YAML (the first two; the rest as a comment): each
 * `- name: n` item becomes the entry `n:` with `kind:` as `call:`, `do:` lists likewise.
 */
function mappingForm(field: 'steps' | 'do', list: readonly unknown[]): string {
  const convert = (items: readonly unknown[], limit: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    items.slice(0, limit).forEach((item, i) => {
      if (item === null || typeof item !== 'object' || Array.isArray(item)) return;
      const { name, kind, call, do: body, ...rest } = item as Record<string, unknown>;
      const key = typeof name === 'string' && name !== '' ? name : `step_${i + 1}`;
      out[key] = {
        call: call ?? kind ?? 'agent',
        ...rest,
        ...(Array.isArray(body) ? { do: convert(body, Infinity) } : body !== undefined ? { do: body } : {}),
      };
    });
    return out;
  };
  const shown = convert(list, 2);
  if (Object.keys(shown).length === 0) shown.my_step = { call: 'agent', agent: 'my_agent' };
  const rest = list.length - 2;
  const more = rest > 0 ? `\n  # … and the other ${rest === 1 ? 'step' : `${rest} steps`} the same way` : '';
  return stringify({ [field]: shown }, { lineWidth: 0 }).trimEnd() + more;
}

/**
 * A loop that reads its own output is not a cycle (GraphN's rule): a judge_loop's pass_condition
 * reads the latest round's candidate, a while's condition the result of the iteration just run, and
 * any step of a while's body the previous iteration's result (null in the first). Another field of
 * the loop reading it (its input, its `when`) would need the loop's result before it starts.
 */
function readsOwnLatest(loop: StepRec, reader: StepRec, ref: Ref): boolean {
  if (loop !== reader) return loop.kind === 'while';
  const field = ref.path[loop.path.length];
  return (loop.kind === 'while' && field === 'condition') || (loop.kind === 'judge_loop' && field === 'pass_condition');
}

/** The function a stand-in for a step with shape errors names (never checked, never run). */
const BROKEN_STEP = 'broken_step';

/**
 * The path of the innermost step an issue at `path` is in (`steps.a`, `steps.a.do.b`, a conditional's
 * `steps.c.then`), or undefined when the issue is not inside a step.
 */
function brokenStepPath(path: readonly PropertyKey[]): (string | number)[] | undefined {
  if (path[0] !== 'steps' || typeof path[1] !== 'string') return undefined;
  let end = 2;
  for (;;) {
    const next = path[end];
    if (next === 'do' && typeof path[end + 1] === 'string') end += 2;
    else if ((next === 'then' || next === 'else') && path.length > end + 1) end += 1;
    else break;
  }
  return path.slice(0, end) as (string | number)[];
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A `steps.<output name>` reference readsOf resolved: where it is in its template, and both names. */
interface Aliased {
  readonly offset: number;
  readonly length: number;
  readonly from: string;
  readonly to: string;
}

/** `text` with each resolved reference's output: name replaced by its step's name (`steps.flag` → `steps.check`). */
function withStepNames(text: string, aliased: readonly Aliased[]): string {
  let out = text;
  for (const a of [...aliased].sort((x, y) => y.offset - x.offset)) {
    const source = out.slice(a.offset, a.offset + a.length);
    const at = source.indexOf(a.from, 'steps'.length);
    out = out.slice(0, a.offset) + source.slice(0, at) + a.to + source.slice(at + a.from.length) + out.slice(a.offset + a.length);
  }
  return out;
}
