import jsonata from 'jsonata';
import { isMap, isSeq, parseDocument, type Document, type Node, type Pair, type Scalar } from 'yaml';
import { z } from 'zod';
import { SourceText, StepforgeError, type Diagnostic, type SourceLocation, didYouMean } from '@stepforge/contract';
import type { GraphView } from '../graph/GraphView.js';
import { checkInputDefaults } from '../input/checkInputDefaults.js';
import { INPUT_FIELD_TYPES, InputFieldSpec, InputSectionSpec, toInputSchema, type InputSchema } from '../input/InputSchema.js';
import { parseTemplate } from '../expr/parseTemplate.js';
import { DEFAULT_TIER_NAME, resolveTiers, type TierTable } from '../tiers/Tier.js';
import { FastPathDeclined } from '../source/Locator.js';
import { parseFastYaml, type FastYaml } from '../source/fastYaml.js';
import { analyzeChain, type ChainExpressionError } from './analyzeChain.js';
import type { ChainLocator, ChainPath } from './ChainLocator.js';
import type { ChainDocument, ChainStep } from './ChainDocument.js';
import { CHAIN_TASK_KINDS, ChainTaskSchema, NAME_PATTERN, type ChainTask } from './ChainTask.js';
import { tierLimits, unknownTier } from '../checks/tierLimit.js';
import { manifestTriggers, TriggersSchema } from '../checks/triggers.js';
import { describeZodIssue, valueAtPath, zodObjectAt } from '../source/zodIssues.js';
import { FastChainLocator } from './FastChainLocator.js';
import { scalarOffsets } from '../source/scalarOffsets.js';
import { stepIdentity } from '../ir/stepIdentity.js';
import { sanitiseWorkflowName, WORKFLOW_NAME_PATTERN, workflowNameFromFile } from '../workflowNameFromFile.js';
import { YamlChainLocator } from './YamlChainLocator.js';
import { contractGrants, normalizeKortecxTask, withInferredKinds, type KortecxFinding } from './kortecxTask.js';
import { yamlErrorMessage } from '../source/yamlErrorMessage.js';
import { unsupportedYamlKey, type UnsupportedYamlKey } from '../source/unsupportedYamlKey.js';
import { aliasExpansionMessage, MAX_ALIAS_COUNT, yamlValueIssues } from '../source/yamlValueIssues.js';

/** Options for loading a chain document. */
export interface LoadChainOptions {
  /** Shown in error locations. */
  readonly file?: string;
  /** `topology` (what `graph` needs: parse, unknown_handle, cycle, agentic_non_model) or `full` (default; adds tier and task checks). */
  readonly level?: 'topology' | 'full';
  /** Extra or overriding tiers on top of DEFAULT_TIERS. */
  readonly tiers?: TierTable;
  /** Unknown top-level fields are errors instead of warnings. */
  readonly strict?: boolean;
  /** At level `full`, apply the tier policy (default true); Kortecx's lowering (`graph --format kortecx`) has none. */
  readonly tierPolicy?: boolean;
}

/** What loading produced: the document (only when there are no errors), the graph (when the topology is sound), and every finding. */
export interface LoadChainResult {
  readonly document?: ChainDocument;
  readonly graph?: GraphView;
  readonly errors: StepforgeError[];
  readonly warnings: Diagnostic[];
}

/** Top-level fields a chain document may have. */
// `express` and `triggers` are deployment settings read by the CDK app (infra/); checked like the rest so
// `validate` refuses what synth would.
// `context_bundles` is Kortecx's run-level grounding, accepted so its documents load (it has no effect here).
export const CHAIN_DOCUMENT_FIELDS = [
  'name',
  'description',
  'chain',
  'tasks',
  'tier',
  'input',
  'seed',
  'express',
  'triggers',
  'context_bundles',
] as const;

/** Errors collected beyond this many are dropped (graphql-js style cap). */
const MAX_ERRORS = 50;

type Path = ChainPath;

/** The `yaml` options the chain loader parses with (its own duplicate-key check, see loadChainDocumentPrecise). */
export const CHAIN_PARSE_OPTIONS = { prettyErrors: false, keepSourceTokens: false, uniqueKeys: false } as const;

/**
 * Loads a chain document (YAML or JSON): parses the `chain:` expression, builds the graph and runs the
 * checks for `level`. Never throws for bad input; every problem is a located StepforgeError.
 * A valid, warning-free document loads on the fast path (js-yaml); anything else, on the precise one.
 * `parsed` reuses a Document parsed from `text` with CHAIN_PARSE_OPTIONS (loadDocument sniffs with it).
 */
export function loadChainDocument(text: string, options: LoadChainOptions = {}, parsed?: Document.Parsed): LoadChainResult {
  const src = new SourceText(text, options.file);
  return (
    (parsed ? undefined : loadChainDocumentFast(text, options, undefined, src)) ?? loadChainDocumentPrecise(text, options, parsed, src)
  );
}

/**
 * The fast path alone: the result when the document has no error and no warning and every location it
 * needs was found exactly, else undefined. `parsed` reuses parseFastYaml of the same text (loadDocument).
 */
export function loadChainDocumentFast(
  text: string,
  options: LoadChainOptions = {},
  parsed?: FastYaml,
  src = new SourceText(text, options.file),
): LoadChainResult | undefined {
  const fast = parsed ?? parseFastYaml(text, src);
  if (!fast) return undefined;
  try {
    return new ChainLoader(src, options, new FastChainLocator(fast.data, fast.locator), true).load(() => fast.data);
  } catch (e) {
    if (e instanceof Error && e.name === 'FastPathDeclined') return undefined;
    throw e;
  }
}

/** The precise path alone (`yaml`): reports every error and warning. `parsed` as for loadChainDocument. */
export function loadChainDocumentPrecise(
  text: string,
  options: LoadChainOptions = {},
  parsed?: Document.Parsed,
  src = new SourceText(text, options.file),
): LoadChainResult {
  // yaml's own duplicate-key check is quadratic in the map size; checkKeys does it with a Set.
  const doc = parsed ?? parseDocument(text, CHAIN_PARSE_OPTIONS);
  const complexKeys: UnsupportedYamlKey[] = [];
  if (doc.errors.length === 0) checkKeys(doc, doc.contents, complexKeys);
  const loader = new ChainLoader(src, options, new YamlChainLocator(doc, text), false);
  // toJS would stringify a complex key (and `yaml` would print a process warning about it), throw on an
  // alias without its anchor and loop on one inside its own value: stop before.
  const values = doc.errors.length === 0 ? yamlValueIssues(doc, text) : undefined;
  if (values) complexKeys.push(...values.issues);
  if (doc.errors.length > 0 || complexKeys.length > 0) return loader.yamlErrors(doc.errors, complexKeys);
  if (values?.firstAlias === undefined) return loader.load(() => doc.toJS());
  // With aliases, converting may still fail (too many expansions): convert first, to report that at an alias.
  let js: unknown;
  try {
    js = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    return loader.yamlErrors([], [{ ...values.firstAlias, message: aliasExpansionMessage(e) }]);
  }
  return loader.load(() => js);
}

/**
 * Topology-checks a bare chain expression in which every handle is a model step (`stepforge graph --expr`).
 * Error locations are line:column inside `expression`.
 */
export function loadChainExpression(expression: string, options: { file?: string } = {}): { graph?: GraphView; errors: StepforgeError[] } {
  const source = new SourceText(expression, options.file);
  const analysis = analyzeChain(expression, { kindOf: () => 'model', handles: [] });
  const errors = analysis.errors.map((e) => {
    const { line, column } = source.position(e.offset);
    return new StepforgeError(e.code, e.message, {
      location: { file: options.file, line, column, length: Math.max(1, e.length) },
      source,
      details: e.details,
    });
  });
  if (errors.length > 0 || analysis.graph === undefined) return { errors };
  return {
    graph: { nodes: analysis.graph.nodes.map((n) => ({ handle: n.handle, kind: 'model', tools: n.tools })), edges: analysis.graph.edges },
    errors,
  };
}

/** ChainLoader's checks read plain data and ask `loc` for offsets; `fast` declines at the first finding. */

/** Kortecx's bundled tools, by their registry ids, and the built-in each is here. */
const KORTECX_BUNDLED_TOOLS: Readonly<Record<string, string>> = { 'mcp-echo/echo': 'echo' };

class ChainLoader {
  private readonly text: string;
  private readonly errors: StepforgeError[] = [];
  private readonly warnings: Diagnostic[] = [];
  /** Where each task's `max_turns` / `max_tool_calls` were written (Kortecx may put them in `params`). */
  private readonly budgetPaths = new Map<string, Partial<Record<'max_turns' | 'max_tool_calls', Path>>>();
  /** Handles of the tasks written without `kind:`, whose kind was inferred from their fields. */
  private readonly inferredKinds = new Set<string>();

  constructor(
    private readonly source: SourceText,
    private readonly options: LoadChainOptions,
    private readonly loc: ChainLocator,
    private readonly fast: boolean,
  ) {
    this.text = source.text;
  }

  /** Reports the YAML parser's errors and the keys that are not plain strings (the precise path's, before any check runs). */
  yamlErrors(
    errors: readonly { message: string; pos: readonly [number, number] }[],
    complexKeys: readonly UnsupportedYamlKey[] = [],
  ): LoadChainResult {
    for (const e of errors)
      this.error('invalid_document', `invalid YAML: ${yamlErrorMessage(e)}`, e.pos[0], Math.max(1, e.pos[1] - e.pos[0]));
    for (const k of complexKeys) this.error('invalid_document', k.message, k.offset, k.length);
    return this.result();
  }

  /** `data` is read only once `chain:` and `tasks:` have the right shape (converting costs time). */
  load(data: () => unknown): LoadChainResult {
    const loc = this.loc;
    if (loc.kindAt([]) !== 'map') {
      this.error('invalid_document', 'a chain document must be a mapping with `chain:` and `tasks:`', loc.offsetOf([]));
      return this.result();
    }
    const full = (this.options.level ?? 'full') === 'full';
    this.checkTopLevelFields();

    const chainKind = loc.kindAt(['chain']);
    if (chainKind === undefined) {
      this.error('invalid_document', 'missing \'chain:\' (the chain expression, e.g. "plan@web-search > [draft & critique] > judge")', 0);
      return this.result();
    }
    const chainScalar = chainKind === 'scalar' ? loc.scalar(['chain']) : undefined;
    if (chainScalar === undefined || typeof chainScalar.value !== 'string') {
      this.error('invalid_document', "'chain' must be a string holding the chain expression", loc.offsetOf(['chain']));
      return this.result();
    }
    const tasksKind = loc.kindAt(['tasks']);
    if (tasksKind === undefined) {
      this.error('invalid_document', "missing 'tasks:' (a mapping from each handle to its task)", 0);
      return this.result();
    }
    if (tasksKind !== 'map') {
      this.error('invalid_document', "'tasks' must be a mapping from each handle to its task", loc.offsetOf(['tasks']));
      return this.result();
    }
    const js = data() as Record<string, unknown>;
    // Kortecx lets a task leave out `kind` and infers it from the fields it has; so does this loader.
    const written = js.tasks as Record<string, unknown>;
    const tasks = withInferredKinds(written);
    if (tasks !== written) for (const h of Object.keys(tasks)) if (tasks[h] !== written[h]) this.inferredKinds.add(h);
    const taskNames = Object.keys(tasks);
    const kindOf = (h: string): string | undefined => {
      if (!Object.prototype.hasOwnProperty.call(tasks, h)) return undefined;
      const kind = (tasks[h] as { kind?: unknown } | null)?.kind;
      return typeof kind === 'string' ? kind : 'unknown';
    };

    const expression = chainScalar.value;
    const analysis = analyzeChain(expression, { kindOf, handles: taskNames });
    const map = scalarOffsets(chainScalar, this.text);
    for (const e of analysis.errors) this.chainError(e, map);
    const graph = analysis.graph;
    if (graph === undefined) return this.result();

    // Kortecx grants a model step tools in its task (`tool_contract`) as well as with `@` tags.
    const toolsOf = new Map(
      graph.nodes.map((n) => {
        const extra = contractGrants(tasks[n.handle]).filter((t) => !n.tools.includes(t));
        return [n.handle, extra.length > 0 ? [...n.tools, ...extra] : n.tools] as const;
      }),
    );
    const used = new Set(graph.nodes.map((n) => n.handle));
    for (const h of taskNames) {
      if (!used.has(h)) {
        this.warn('unused_task', `task '${h}' is defined but not used in the chain`, this.loc.keyOffset(['tasks', h]), h.length);
      }
    }
    const topologyOk = this.errors.length === 0;
    const graphView: GraphView | undefined = topologyOk
      ? {
          nodes: graph.nodes.map((n) => ({ handle: n.handle, kind: kindOf(n.handle)!, tools: toolsOf.get(n.handle)! })),
          edges: graph.edges,
        }
      : undefined;

    // Full checks: tier policy and the used tasks' fields.
    const parsedTasks = new Map<string, ChainTask>();
    let tierName = DEFAULT_TIER_NAME;
    const budgets = new Map<string, { maxTurns: number; maxToolCalls: number }>();
    if (full) {
      for (const n of graph.nodes) {
        if (kindOf(n.handle) === undefined) continue;
        const task = this.checkTask(n.handle, tasks[n.handle]);
        if (task !== undefined) parsedTasks.set(n.handle, task);
      }
      const tier = this.options.tierPolicy === false ? undefined : this.checkTier(js);
      // The tier counts agentic steps of a sound graph; with unknown handles or a cycle the count would mislead.
      if (tier !== undefined && topologyOk) {
        tierName = tier.name;
        // With a task whose kind is wrong the count is unreliable; its invalid_task error comes first.
        const kindsOk = graph.nodes.every(
          (n) => parsedTasks.has(n.handle) || (CHAIN_TASK_KINDS as readonly string[]).includes(kindOf(n.handle)!),
        );
        const steps = graph.nodes.map((n) => ({
          handle: n.handle,
          start: n.start,
          kind: kindOf(n.handle)!,
          tools: toolsOf.get(n.handle)!,
          task: parsedTasks.get(n.handle),
        }));
        const limits = tierLimits(tier, steps, kindsOk, (handle, field) => formatPath(this.budgetPath(handle, field)));
        for (const { finding, at } of limits.findings) {
          if ('expression' in at) {
            this.error(finding.code, finding.message, map[at.expression]!, at.length);
            continue;
          }
          const path = this.budgetPath(at.handle, at.field);
          this.error(finding.code, finding.message, this.loc.offsetAt(path), this.loc.scalarLength(path));
        }
        for (const [handle, budget] of limits.budgets) budgets.set(handle, budget);
      }
      if (topologyOk) this.checkSelect(graph, parsedTasks);
      this.checkDocumentFields(js);
    }

    if (this.errors.length > 0) return this.result(graphView);
    const steps: ChainStep[] = graph.nodes.map((n, index) => {
      const task = (parsedTasks.get(n.handle) ?? tasks[n.handle]) as ChainTask;
      const kind = kindOf(n.handle)!;
      const { kind: _kind, ...config } = (task ?? {}) as Record<string, unknown>;
      const budget = budgets.get(n.handle);
      return {
        index,
        handle: n.handle,
        kind,
        tools: toolsOf.get(n.handle)!,
        task,
        identity: stepIdentity(kind, config, toolsOf.get(n.handle)!),
        location: this.location(map[n.start]!, n.handle.length),
        taskLocation: this.location(this.loc.keyOffset(['tasks', n.handle]), n.handle.length),
        ...(budget ? { budget } : {}),
      };
    });
    const document: ChainDocument = {
      format: 'chain',
      ...(typeof js.name === 'string' ? { name: js.name } : {}),
      ...(typeof js.description === 'string' ? { description: js.description } : {}),
      chain: expression,
      tier: tierName,
      input: this.inputSchema(js.input),
      ...(typeof js.seed === 'number' ? { seed: js.seed } : {}),
      steps,
      edges: graph.edges,
      tasks,
      ...(Array.isArray(js.context_bundles) ? { contextBundles: js.context_bundles as string[] } : {}),
      ...(typeof js.express === 'boolean' ? { express: js.express } : {}),
      ...(Array.isArray(js.triggers)
        ? {
            triggers: manifestTriggers(js.triggers, (i) =>
              this.location(this.loc.keyOffset(['triggers', i, 'event_pattern']), 'event_pattern'.length),
            ),
          }
        : {}),
    };
    return { ...this.result(graphView), document };
  }

  private result(graph?: GraphView): LoadChainResult {
    // Errors in document order, so the first one printed (and the one in `--json`'s "error") is the earliest.
    const byPosition = (a: { location?: SourceLocation }, b: { location?: SourceLocation }) =>
      (a.location?.line ?? 0) - (b.location?.line ?? 0) || (a.location?.column ?? 0) - (b.location?.column ?? 0);
    const errors = [...this.errors].sort(byPosition).slice(0, MAX_ERRORS);
    return { ...(graph ? { graph } : {}), errors, warnings: [...this.warnings].sort(byPosition) };
  }

  private checkTopLevelFields(): void {
    for (const { key, offset } of this.loc.topLevelKeys()) {
      if (key !== undefined && (CHAIN_DOCUMENT_FIELDS as readonly string[]).includes(key)) continue;
      const suggestion = key === undefined ? undefined : didYouMean(key, CHAIN_DOCUMENT_FIELDS);
      const message = `unknown top-level field '${key ?? '?'}'${suggestion ? `; did you mean '${suggestion}'?` : ''} (expected ${CHAIN_DOCUMENT_FIELDS.join(', ')})`;
      if (this.options.strict) this.error('invalid_document', message, offset, key?.length ?? 1);
      else this.warn('unknown_field', message, offset, key?.length ?? 1);
    }
  }

  private checkDocumentFields(js: Record<string, unknown>): void {
    const loc = this.loc;
    const seed = loc.kindAt(['seed']);
    if (seed !== undefined && !(seed === 'scalar' && Number.isInteger(js.seed))) {
      this.error('invalid_document', "'seed' must be an integer", loc.offsetOf(['seed']));
    }
    for (const field of ['name', 'description'] as const) {
      const kind = loc.kindAt([field]);
      if (kind !== undefined && !(kind === 'scalar' && typeof js[field] === 'string'))
        this.error('invalid_document', `'${field}' must be a string`, loc.offsetOf([field]));
    }
    if (loc.kindAt(['name']) === 'scalar' && typeof js.name === 'string' && !WORKFLOW_NAME_PATTERN.test(js.name)) {
      this.error(
        'invalid_document',
        "'name' must be 1–80 characters of letters, digits, '-' and '_' (it names the state machine)",
        loc.offsetOf(['name']),
      );
    }
    if (loc.kindAt(['name']) === undefined) this.checkDerivedName();
    if (loc.kindAt(['express']) !== undefined) this.checkValue('invalid_document', ['express'], js.express, z.boolean(), 'express');
    if (loc.kindAt(['triggers']) !== undefined) this.checkValue('invalid_document', ['triggers'], js.triggers, TriggersSchema, 'triggers');
    if (loc.kindAt(['context_bundles']) !== undefined) {
      const r = z.array(z.string().min(1)).safeParse(js.context_bundles);
      if (!r.success)
        this.reportIssues(
          'invalid_document',
          ['context_bundles'],
          js.context_bundles,
          r.error.issues,
          z.array(z.string()),
          'context_bundles',
        );
      else if (r.data.length > 0) {
        this.warn(
          'no_effect',
          "context_bundles: has no effect here (Kortecx's server injects these bundles into entry steps; Stepforge has no bundles); it is kept only in the Kortecx lowering (graph --format kortecx)",
          loc.keyOffset(['context_bundles']),
          'context_bundles'.length,
        );
      }
    }
    this.checkInput(js);
  }

  /** Without `name:` the workflow is named after its file, and the state machine API refuses a bad name only at run time. */
  private checkDerivedName(): void {
    const derived = workflowNameFromFile(this.options.file);
    if (WORKFLOW_NAME_PATTERN.test(derived)) return;
    this.error(
      'invalid_document',
      `the file name cannot be used as a workflow name: '${derived}' is not 1–80 characters of letters, digits, '-' and '_' (without \`name:\`, the workflow is named after its file); add \`name: ${sanitiseWorkflowName(derived)}\``,
      0,
    );
  }

  private checkInput(js: Record<string, unknown>): void {
    const kind = this.loc.kindAt(['input']);
    if (kind === undefined) return;
    if (kind !== 'map') {
      this.error(
        'invalid_document',
        "'input' must be a mapping from field name to type (e.g. `topic: string`)",
        this.loc.offsetOf(['input']),
      );
      return;
    }
    const valid: Record<string, z.input<typeof InputFieldSpec>> = {};
    for (const [name, spec] of Object.entries(js.input as Record<string, unknown>)) {
      if (InputFieldSpec.safeParse(spec).success) valid[name] = spec as z.input<typeof InputFieldSpec>;
      else this.reportInputField(name, spec);
    }
    // The same check (and message) as the DSL's: defaults are applied at run start without being re-checked.
    for (const m of checkInputDefaults(toInputSchema(valid))) {
      const path = ['input', m.field, 'default'];
      this.error('invalid_document', m.message, this.loc.offsetOf(path), this.loc.scalarLength(path));
    }
  }

  private reportInputField(name: string, spec: unknown): void {
    if (spec !== null && typeof spec === 'object' && !Array.isArray(spec)) {
      // The mapping form: each wrong field at its own node (the union alone would only say that no form matched).
      this.checkValue('invalid_document', ['input', name], spec, INPUT_DECLARATION, 'an input declaration');
      return;
    }
    const suggestion = typeof spec === 'string' ? didYouMean(spec, INPUT_FIELD_TYPES) : undefined;
    const path = ['input', name];
    this.error(
      'invalid_document',
      `input.${name}: expected a type (${INPUT_FIELD_TYPES.join(', ')}) or {type, required, description, default}, got ${Array.isArray(spec) ? 'a list' : JSON.stringify(spec)}${suggestion ? `; did you mean '${suggestion}'?` : ''}`,
      spec === null ? this.loc.keyOffset(path) : this.loc.offsetAt(path),
      spec === null ? name.length : this.loc.scalarLength(path),
    );
  }

  /** The normalised `input:` schema (empty when absent or, at topology level, unchecked and malformed). */
  private inputSchema(raw: unknown): InputSchema {
    const r = InputSectionSpec.safeParse(raw ?? {});
    if (!r.success) return { fields: [] };
    return toInputSchema(r.data, (name) => this.location(this.loc.keyOffset(['input', name]), name.length));
  }

  private checkTier(js: Record<string, unknown>) {
    const tiers = resolveTiers(this.options.tiers);
    const kind = this.loc.kindAt(['tier']);
    if (kind === undefined) return tiers[DEFAULT_TIER_NAME];
    const name = kind === 'scalar' ? js.tier : undefined;
    if (typeof name === 'string' && Object.prototype.hasOwnProperty.call(tiers, name)) return tiers[name];
    const finding = unknownTier(name, tiers);
    this.error(finding.code, finding.message, this.loc.offsetOf(['tier']));
    return undefined;
  }

  /** Where a task's `max_turns` / `max_tool_calls` is written (Kortecx may put it in `params`). */
  private budgetPath(handle: string, field: 'max_turns' | 'max_tool_calls'): Path {
    return this.budgetPaths.get(handle)?.[field] ?? ['tasks', handle, field];
  }

  /** `select: verbatim` chooses among the task's parents' outputs: it needs at least one. */
  private checkSelect(
    graph: { readonly nodes: readonly { readonly handle: string }[]; readonly edges: readonly (readonly [number, number])[] },
    tasks: ReadonlyMap<string, ChainTask>,
  ): void {
    graph.nodes.forEach((n, i) => {
      const task = tasks.get(n.handle);
      if (task?.kind !== 'model' || task.select !== 'verbatim') return;
      if (graph.edges.some(([, b]) => b === i)) return;
      this.error(
        'invalid_task',
        `tasks.${n.handle}.select: verbatim makes '${n.handle}' answer with one of its parents' outputs, but it has none; put it after the candidates (e.g. "[a & b] > ${n.handle}"), or remove select`,
        this.loc.offsetAt(['tasks', n.handle, 'select']),
        this.loc.scalarLength(['tasks', n.handle, 'select']),
      );
    });
  }

  /** Validates one used task with zod; every issue becomes an `invalid_task` error at the offending node. */
  private checkTask(handle: string, value: unknown): ChainTask | undefined {
    if (value !== null && typeof value === 'object' && (value as { kind?: unknown }).kind === 'exec') {
      const path = ['tasks', handle, 'kind'];
      this.error(
        'invalid_task',
        `tasks.${handle}.kind: 'exec' is reserved in Kortecx (a registered body, not yet runnable there) and Stepforge does not run it; use model, tool, connector or pure`,
        this.loc.offsetAt(path),
        this.loc.scalarLength(path),
      );
      return undefined;
    }
    // Kortecx tool ids may hold characters our tool names cannot: its bundled tools by their ids
    // here ("mcp-echo/echo" is the built-in echo), any other such id an error at the id.
    let contract = value !== null && typeof value === 'object' ? (value as { tool_contract?: unknown }).tool_contract : undefined;
    if (contract !== null && typeof contract === 'object' && !Array.isArray(contract)) {
      if (Object.keys(contract).some((k) => Object.hasOwn(KORTECX_BUNDLED_TOOLS, k))) {
        contract = Object.fromEntries(Object.entries(contract).map(([k, v]) => [KORTECX_BUNDLED_TOOLS[k] ?? k, v]));
        value = { ...(value as object), tool_contract: contract };
      }
      const bad = Object.keys(contract as object).filter((k) => !NAME_PATTERN.test(k));
      for (const k of bad) {
        this.error(
          'invalid_task',
          `tasks.${handle}.tool_contract: '${k}' cannot name a tool here: Stepforge's tools are named [A-Za-z_][A-Za-z0-9_-]*; use the name of an installed tool (e.g. web-search, fs-list, echo)`,
          this.loc.keyOffset(['tasks', handle, 'tool_contract', k]),
          k.length,
        );
      }
      if (bad.length > 0) return undefined;
    }
    const result = ChainTaskSchema.safeParse(value);
    if (!result.success) {
      const kind = value !== null && typeof value === 'object' ? (value as { kind?: unknown }).kind : undefined;
      // The kind's own schema lists the fields an unknown one is compared with.
      const option = ChainTaskSchema.options.find((o) => o.shape.kind.value === kind);
      const what = this.inferredKinds.has(handle) ? `a task without kind:, read as ${String(kind)},` : `a ${String(kind)} task`;
      this.reportIssues('invalid_task', ['tasks', handle], value, result.error.issues, option ?? ChainTaskSchema, what);
      return undefined;
    }
    const normalized = normalizeKortecxTask(handle, result.data);
    for (const f of normalized.errors) this.finding(f, 'error');
    for (const f of normalized.warnings) this.finding(f, 'warning');
    if (normalized.task === undefined) return undefined;
    this.budgetPaths.set(handle, normalized.budgetPaths);
    const task = normalized.task;
    if (task.kind === 'model') {
      for (const field of ['prompt', 'system'] as const) {
        const text = task[field];
        if (text === undefined) continue;
        try {
          parseTemplate(text);
        } catch (e) {
          const err = e as { message?: string; details?: { offset?: unknown } };
          this.error(
            'invalid_task',
            `tasks.${handle}.${field}: ${err.message ?? String(e)}`,
            this.loc.offsetInside(['tasks', handle, field], err.details?.offset),
          );
          return undefined;
        }
      }
    }
    if (task.kind === 'pure' && task.expr !== undefined) {
      try {
        jsonata(task.expr);
      } catch (e) {
        const err = e as { message?: string; position?: number };
        const position = typeof err.position === 'number' ? err.position - 1 : undefined;
        this.error(
          'invalid_task',
          `tasks.${handle}.expr: invalid JSONata: ${err.message ?? String(e)}`,
          this.loc.offsetInside(['tasks', handle, 'expr'], position),
        );
        return undefined;
      }
    }
    return task;
  }

  /** Checks `value`, found at `base`, against `schema`; problems are reported as by reportIssues. */
  private checkValue(code: string, base: Path, value: unknown, schema: z.ZodType, what: string): void {
    const r = schema.safeParse(value);
    if (!r.success) this.reportIssues(code, base, value, r.error.issues, schema, what);
  }

  /**
   * Reports zod issues of `value` (found at `base`, checked against `schema`) as `code` errors, each at its
   * own node: an unknown field at its key with did-you-mean and the fields of the mapping it is in (`what`
   * names the outermost one; nested ones are named by their schema's description), anything else at the
   * value with "expected …, got …".
   */
  private reportIssues(
    code: string,
    base: Path,
    value: unknown,
    issues: readonly z.core.$ZodIssue[],
    schema: z.ZodType,
    what: string,
  ): void {
    for (const issue of issues) {
      const at = issue.path as (string | number)[];
      if (issue.code === 'unrecognized_keys') {
        const owner = zodObjectAt(schema, at);
        const fields = owner ? Object.keys(owner.shape) : [];
        const name = at.length === 0 ? what : (owner?.description ?? formatPath([...base, ...at]));
        for (const key of issue.keys) {
          const suggestion = didYouMean(key, fields);
          this.error(
            code,
            `${formatPath([...base, ...at, key])}: unknown field${suggestion ? `; did you mean '${suggestion}'?` : ''} (${name} has ${fields.join(', ')})`,
            this.loc.keyOffset([...base, ...at, key]),
            key.length,
          );
        }
        continue;
      }
      const path = [...base, ...at];
      const got = valueAtPath(value, issue.path);
      let message = `${formatPath(path)}: ${describeZodIssue(issue, got)}`;
      // A misspelt choice (`kind: modle`, `jitter: full`) gets the closest allowed one.
      const choices = (issue as { values?: unknown[] }).values ?? (issue as { options?: unknown[] }).options;
      if (typeof got === 'string' && Array.isArray(choices)) {
        const s = didYouMean(
          got,
          choices.filter((c): c is string => typeof c === 'string'),
        );
        if (s) message += `; did you mean '${s}'?`;
      }
      this.error(code, message, this.loc.offsetAt(path), this.loc.scalarLength(path));
    }
  }

  private chainError(e: ChainExpressionError, map: readonly number[]): void {
    if (this.fast) throw new FastPathDeclined(e.code);
    const start = map[Math.min(e.offset, map.length - 1)]!;
    const endChar = map[Math.min(e.offset + Math.max(1, e.length) - 1, map.length - 1)]!;
    const a = this.source.position(start);
    const b = this.source.position(endChar);
    const length = a.line === b.line ? Math.max(1, b.column - a.column + 1) : 1;
    this.errors.push(
      new StepforgeError(e.code, e.message, { location: { ...this.fileField(), ...a, length }, source: this.source, details: e.details }),
    );
  }

  /** A Kortecx mapping finding: a warning (or an error about a whole field) at the field's key, an error about a value at the value. */
  private finding(f: KortecxFinding, severity: 'error' | 'warning'): void {
    const key = f.path[f.path.length - 1];
    const kind = this.loc.kindAt(f.path);
    const atValue = severity === 'error' && kind === 'scalar';
    const atKey = !atValue && kind !== undefined && typeof key === 'string';
    const offset = atKey ? this.loc.keyOffset(f.path) : this.loc.offsetAt(f.path);
    const length = atValue ? this.loc.scalarLength(f.path) : atKey ? String(key).length : 1;
    if (severity === 'error') this.error(f.code, f.message, offset, length);
    else this.warn(f.code, f.message, offset, length);
  }

  private error(code: string, message: string, offset: number, length = 1): void {
    if (this.fast) throw new FastPathDeclined(code);
    if (this.errors.length >= MAX_ERRORS) return;
    this.errors.push(new StepforgeError(code, message, { location: this.location(offset, length), source: this.source }));
  }

  private warn(code: string, message: string, offset: number, length = 1): void {
    if (this.fast) throw new FastPathDeclined(code);
    this.warnings.push({ severity: 'warning', code, message, location: this.location(offset, length) });
  }

  private fileField(): { file?: string } {
    return this.options.file === undefined ? {} : { file: this.options.file };
  }

  private location(offset: number, length = 1): SourceLocation {
    return { ...this.fileField(), ...this.source.position(offset), length: Math.max(1, length) };
  }
}

/** The mapping form of an `input:` field, `{type, required, description, default}` (InputFieldSpec's second form). */
const INPUT_DECLARATION = InputFieldSpec.options[1];

function formatPath(path: Path): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/**
 * Walks every mapping at any depth: a key that appears twice is a YAML error (at its second occurrence);
 * a key that is not a scalar names no field or handle, so it is collected in `complex`.
 */
function checkKeys(doc: Document.Parsed, node: unknown, complex: UnsupportedYamlKey[]): void {
  if (isMap(node)) {
    const seen = new Set<unknown>();
    for (const pair of node.items as Pair<Node | null, Node>[]) {
      const k = pair.key;
      const unsupported = unsupportedYamlKey(pair);
      if (unsupported) complex.push(unsupported);
      else {
        const key = (k as Scalar | null)?.value ?? null;
        if (seen.has(key)) {
          const at = k?.range?.[0] ?? 0;
          doc.errors.push(
            Object.assign(new Error(`Map keys must be unique; '${String(key)}' appears twice`), {
              pos: [at, at + String(key).length] as [number, number],
            }) as never,
          );
        }
        seen.add(key);
      }
      checkKeys(doc, pair.value, complex);
    }
  } else if (isSeq(node)) {
    for (const item of node.items) checkKeys(doc, item, complex);
  }
}
