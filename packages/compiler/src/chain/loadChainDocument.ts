import jsonata from 'jsonata';
import { isMap, isScalar, isSeq, parseDocument, type Document, type Node, type Pair } from 'yaml';
import { SourceText } from '../errors/SourceText.js';
import { StepforgeError, type Diagnostic, type SourceLocation } from '../errors/StepforgeError.js';
import type { GraphView } from '../graph/GraphView.js';
import { InputSectionSpec, toInputSchema, type InputSchema } from '../input/InputSchema.js';
import { parseTemplate } from '../expr/parseTemplate.js';
import { DEFAULT_TIER_NAME, resolveTiers, type TierTable } from '../tiers/Tier.js';
import { FastPathDeclined } from '../dsl/DslLocator.js';
import { parseFastYaml, type FastYaml } from '../dsl/parseFastYaml.js';
import { analyzeChain, type ChainExpressionError } from './analyzeChain.js';
import type { ChainLocator, ChainPath } from './ChainLocator.js';
import type { ChainDocument, ChainStep } from './ChainDocument.js';
import { CHAIN_TASK_KINDS, ChainTaskSchema, type ChainTask } from './ChainTask.js';
import { describeZodIssue, valueAtPath } from './describeZodIssue.js';
import { didYouMean } from './didYouMean.js';
import { FastChainLocator } from './FastChainLocator.js';
import { scalarOffsets } from './scalarOffsets.js';
import { stepIdentity } from './stepIdentity.js';
import { YamlChainLocator } from './YamlChainLocator.js';

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
}

/** What loading produced: the document (only when there are no errors), the graph (when the topology is sound), and every finding. */
export interface LoadChainResult {
  readonly document?: ChainDocument;
  readonly graph?: GraphView;
  readonly errors: StepforgeError[];
  readonly warnings: Diagnostic[];
}

/** Top-level fields a chain document may have. */
// `express` and `triggers` are deployment settings read by the CDK app (infra/); listed so they never warn.
export const CHAIN_DOCUMENT_FIELDS = ['name', 'description', 'chain', 'tasks', 'tier', 'input', 'seed', 'express', 'triggers'] as const;

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
  return (parsed ? undefined : loadChainDocumentFast(text, options, undefined, src)) ?? loadChainDocumentPrecise(text, options, parsed, src);
}

/**
 * The fast path alone: the result when the document has no error and no warning and every location it
 * needs was found exactly, else undefined. `parsed` reuses parseFastYaml of the same text (loadDocument).
 */
export function loadChainDocumentFast(text: string, options: LoadChainOptions = {}, parsed?: FastYaml, src = new SourceText(text, options.file)): LoadChainResult | undefined {
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
export function loadChainDocumentPrecise(text: string, options: LoadChainOptions = {}, parsed?: Document.Parsed, src = new SourceText(text, options.file)): LoadChainResult {
  // yaml's own duplicate-key check is quadratic in the map size; checkDuplicateKeys does it with a Set.
  const doc = parsed ?? parseDocument(text, CHAIN_PARSE_OPTIONS);
  if (doc.errors.length === 0) checkDuplicateKeys(doc, doc.contents);
  const loader = new ChainLoader(src, options, new YamlChainLocator(doc, text), false);
  if (doc.errors.length > 0) return loader.yamlErrors(doc.errors);
  return loader.load(() => doc.toJS());
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
    return new StepforgeError(e.code, e.message, { location: { file: options.file, line, column, length: Math.max(1, e.length) }, source, details: e.details });
  });
  if (errors.length > 0 || analysis.graph === undefined) return { errors };
  return { graph: { nodes: analysis.graph.nodes.map((n) => ({ handle: n.handle, kind: 'model', tools: n.tools })), edges: analysis.graph.edges }, errors };
}

/** ChainLoader's checks read plain data and ask `loc` for offsets; `fast` declines at the first finding. */
class ChainLoader {
  private readonly text: string;
  private readonly errors: StepforgeError[] = [];
  private readonly warnings: Diagnostic[] = [];

  constructor(
    private readonly source: SourceText,
    private readonly options: LoadChainOptions,
    private readonly loc: ChainLocator,
    private readonly fast: boolean,
  ) {
    this.text = source.text;
  }

  /** Reports the YAML parser's errors (the precise path's, before any check runs). */
  yamlErrors(errors: readonly { message: string; pos: readonly [number, number] }[]): LoadChainResult {
    for (const e of errors) this.error('invalid_document', `invalid YAML: ${e.message}`, e.pos[0], Math.max(1, e.pos[1] - e.pos[0]));
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
      this.error('invalid_document', "missing 'chain:' (the chain expression, e.g. \"plan@web-search > [draft & critique] > judge\")", 0);
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
    const tasks = js.tasks as Record<string, unknown>;
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

    const used = new Set(graph.nodes.map((n) => n.handle));
    for (const h of taskNames) {
      if (!used.has(h)) {
        this.warn('unused_task', `task '${h}' is defined but not used in the chain`, this.loc.keyOffset(['tasks', h]), h.length);
      }
    }
    const topologyOk = this.errors.length === 0;
    const graphView: GraphView | undefined = topologyOk
      ? { nodes: graph.nodes.map((n) => ({ handle: n.handle, kind: kindOf(n.handle)!, tools: n.tools })), edges: graph.edges }
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
      const tier = this.checkTier(js);
      // The tier counts agentic steps of a sound graph; with unknown handles or a cycle the count would mislead.
      if (tier !== undefined && topologyOk) {
        tierName = tier.name;
        const agentic = graph.nodes.filter((n) => n.tools.length > 0 && kindOf(n.handle) === 'model');
        // With a task whose kind is wrong the count is unreliable; its invalid_task error comes first.
        const kindsOk = graph.nodes.every((n) => parsedTasks.has(n.handle) || (CHAIN_TASK_KINDS as readonly string[]).includes(kindOf(n.handle)!));
        if (kindsOk && agentic.length < tier.minAgenticSteps) {
          this.error(
            'tier_limit',
            `the ${tier.name} tier needs at least ${tier.minAgenticSteps} model step(s) granted a tool, found ${agentic.length}; grant one with '@', e.g. '${graph.nodes.find((n) => kindOf(n.handle) === 'model')?.handle ?? 'plan'}@web-search'`,
            map[0]!,
            1,
          );
        }
        if (agentic.length > tier.maxAgenticSteps) {
          const extra = agentic[tier.maxAgenticSteps]!;
          this.error(
            'tier_limit',
            `the ${tier.name} tier allows at most ${tier.maxAgenticSteps} model steps granted tools, found ${agentic.length} ('${extra.handle}' is number ${tier.maxAgenticSteps + 1})`,
            map[extra.start]!,
            extra.handle.length,
          );
        }
        for (const n of graph.nodes) {
          const task = parsedTasks.get(n.handle);
          if (task?.kind !== 'model') continue;
          const turns = task.max_turns ?? tier.maxTurns;
          const calls = task.max_tool_calls ?? tier.maxToolCalls;
          if (turns > tier.maxTurns) {
            this.error('tier_limit', `tasks.${n.handle}.max_turns: ${turns} exceeds the ${tier.name} tier's budget of ${tier.maxTurns} turns per agentic step (it may narrow the budget, never widen it)`, this.loc.offsetAt(['tasks', n.handle, 'max_turns']), this.loc.scalarLength(['tasks', n.handle, 'max_turns']));
          }
          if (calls > tier.maxToolCalls) {
            this.error('tier_limit', `tasks.${n.handle}.max_tool_calls: ${calls} exceeds the ${tier.name} tier's budget of ${tier.maxToolCalls} tool calls per agentic step (it may narrow the budget, never widen it)`, this.loc.offsetAt(['tasks', n.handle, 'max_tool_calls']), this.loc.scalarLength(['tasks', n.handle, 'max_tool_calls']));
          }
          if (n.tools.length > 0) budgets.set(n.handle, { maxTurns: Math.min(turns, tier.maxTurns), maxToolCalls: Math.min(calls, tier.maxToolCalls) });
        }
      }
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
        tools: n.tools,
        task,
        identity: stepIdentity(kind, config, n.tools),
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
      if (kind !== undefined && !(kind === 'scalar' && typeof js[field] === 'string')) this.error('invalid_document', `'${field}' must be a string`, loc.offsetOf([field]));
    }
    if (loc.kindAt(['name']) === 'scalar' && typeof js.name === 'string' && !/^[A-Za-z0-9_-]{1,80}$/.test(js.name)) {
      this.error('invalid_document', "'name' must be 1–80 characters of letters, digits, '-' and '_' (it names the state machine)", loc.offsetOf(['name']));
    }
    const input = loc.kindAt(['input']);
    if (input === undefined) return;
    if (input !== 'map') {
      this.error('invalid_document', "'input' must be a mapping from field name to type (e.g. `topic: string`)", loc.offsetOf(['input']));
      return;
    }
    const value = js.input as Record<string, unknown>;
    for (const [name, spec] of Object.entries(value)) {
      const r = InputSectionSpec.safeParse({ [name]: spec });
      if (r.success) continue;
      const shorthand = typeof spec === 'string';
      this.error(
        'invalid_document',
        `input.${name}: expected a type (${INPUT_TYPES}) or {type, required, description, default}, got ${JSON.stringify(spec)}`,
        shorthand ? this.loc.offsetAt(['input', name]) : this.loc.keyOffset(['input', name]),
        shorthand ? this.loc.scalarLength(['input', name]) : name.length,
      );
    }
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
    const known = Object.keys(tiers);
    const suggestion = typeof name === 'string' ? didYouMean(name, known) : undefined;
    this.error(
      'tier_limit',
      `unknown tier ${JSON.stringify(name ?? null)}${suggestion ? `; did you mean '${suggestion}'?` : ''} (known tiers: ${known.join(', ')})`,
      this.loc.offsetOf(['tier']),
    );
    return undefined;
  }

  /** Validates one used task with zod; every issue becomes an `invalid_task` error at the offending node. */
  private checkTask(handle: string, value: unknown): ChainTask | undefined {
    const result = ChainTaskSchema.safeParse(value);
    if (!result.success) {
      for (const issue of result.error.issues) {
        if (issue.code === 'unrecognized_keys') {
          for (const key of issue.keys) {
            const allowed = allowedFields(value);
            const suggestion = didYouMean(key, allowed);
            this.error(
              'invalid_task',
              `tasks.${handle}.${key}: unknown field${suggestion ? `; did you mean '${suggestion}'?` : ''} (a ${(value as { kind: string }).kind} task has ${allowed.join(', ')})`,
              this.loc.keyOffset(['tasks', handle, key]),
              key.length,
            );
          }
          continue;
        }
        const path = ['tasks', handle, ...(issue.path as (string | number)[])];
        const got = valueAtPath(value, issue.path);
        let message = `${formatPath(path)}: ${describeZodIssue(issue, got)}`;
        if (issue.code === 'invalid_union' && typeof got === 'string') {
          const s = didYouMean(got, CHAIN_TASK_KINDS);
          if (s) message += `; did you mean '${s}'?`;
        }
        this.error('invalid_task', message, this.loc.offsetAt(path), this.loc.scalarLength(path));
      }
      return undefined;
    }
    const task = result.data;
    if (task.kind === 'model') {
      for (const field of ['prompt', 'system'] as const) {
        const text = task[field];
        if (text === undefined) continue;
        try {
          parseTemplate(text);
        } catch (e) {
          const err = e as { message?: string; details?: { offset?: unknown } };
          this.error('invalid_task', `tasks.${handle}.${field}: ${err.message ?? String(e)}`, this.loc.offsetInside(['tasks', handle, field], err.details?.offset));
          return undefined;
        }
      }
    }
    if (task.kind === 'pure') {
      try {
        jsonata(task.expr);
      } catch (e) {
        const err = e as { message?: string; position?: number };
        const position = typeof err.position === 'number' ? err.position - 1 : undefined;
        this.error('invalid_task', `tasks.${handle}.expr: invalid JSONata: ${err.message ?? String(e)}`, this.loc.offsetInside(['tasks', handle, 'expr'], position));
        return undefined;
      }
    }
    return task;
  }

  private chainError(e: ChainExpressionError, map: readonly number[]): void {
    if (this.fast) throw new FastPathDeclined(e.code);
    const start = map[Math.min(e.offset, map.length - 1)]!;
    const endChar = map[Math.min(e.offset + Math.max(1, e.length) - 1, map.length - 1)]!;
    const a = this.source.position(start);
    const b = this.source.position(endChar);
    const length = a.line === b.line ? Math.max(1, b.column - a.column + 1) : 1;
    this.errors.push(new StepforgeError(e.code, e.message, { location: { ...this.fileField(), ...a, length }, source: this.source, details: e.details }));
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

const INPUT_TYPES = 'string, number, integer, boolean, object, array, any';

function allowedFields(task: unknown): string[] {
  const kind = (task as { kind?: unknown }).kind;
  const option = ChainTaskSchema.options.find((o) => o.shape.kind.value === kind);
  return option ? Object.keys(option.shape) : [];
}

function formatPath(path: Path): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** Reports a key that appears twice in one mapping (at the second occurrence), at any depth. */
function checkDuplicateKeys(doc: Document.Parsed, node: unknown): void {
  if (isMap(node)) {
    const seen = new Set<unknown>();
    for (const pair of node.items as Pair<Node, Node>[]) {
      const key = isScalar(pair.key) ? pair.key.value : pair.key;
      if (seen.has(key)) {
        const at = (pair.key as Node | null)?.range?.[0] ?? 0;
        doc.errors.push(Object.assign(new Error(`Map keys must be unique; '${String(key)}' appears twice`), { pos: [at, at + String(key).length] as [number, number] }) as never);
      }
      seen.add(key);
      checkDuplicateKeys(doc, pair.value);
    }
  } else if (isSeq(node)) {
    for (const item of node.items) checkDuplicateKeys(doc, item);
  }
}
