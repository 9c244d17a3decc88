import jsonata from 'jsonata';
import { isMap, isScalar, isSeq, parseDocument, type Document, type Node, type Pair, type Scalar, type YAMLMap } from 'yaml';
import { SourceText } from '../errors/SourceText.js';
import { StepforgeError, type Diagnostic, type SourceLocation } from '../errors/StepforgeError.js';
import type { GraphView } from '../graph/GraphView.js';
import { InputSectionSpec, toInputSchema, type InputSchema } from '../input/InputSchema.js';
import { parseTemplate } from '../expr/parseTemplate.js';
import { DEFAULT_TIER_NAME, resolveTiers, type TierTable } from '../tiers/Tier.js';
import { analyzeChain, type ChainExpressionError } from './analyzeChain.js';
import type { ChainDocument, ChainStep } from './ChainDocument.js';
import { CHAIN_TASK_KINDS, ChainTaskSchema, type ChainTask } from './ChainTask.js';
import { describeZodIssue } from './describeZodIssue.js';
import { didYouMean } from './didYouMean.js';
import { scalarOffsets } from './scalarOffsets.js';
import { stepIdentity } from './stepIdentity.js';

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

type Path = readonly (string | number)[];

/** The `yaml` options the chain loader parses with (its own duplicate-key check, see ChainLoader.load). */
export const CHAIN_PARSE_OPTIONS = { prettyErrors: false, keepSourceTokens: false, uniqueKeys: false } as const;

/**
 * Loads a chain document (YAML or JSON): parses the `chain:` expression, builds the graph and runs the
 * checks for `level`. Never throws for bad input; every problem is a located StepforgeError.
 * `parsed` reuses a Document parsed from `text` with CHAIN_PARSE_OPTIONS (loadDocument sniffs with it).
 */
export function loadChainDocument(text: string, options: LoadChainOptions = {}, parsed?: Document.Parsed): LoadChainResult {
  return new ChainLoader(text, options).load(parsed);
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

class ChainLoader {
  private readonly source: SourceText;
  private readonly errors: StepforgeError[] = [];
  private readonly warnings: Diagnostic[] = [];
  private doc!: Document.Parsed;

  constructor(
    private readonly text: string,
    private readonly options: LoadChainOptions,
  ) {
    this.source = new SourceText(text, options.file);
  }

  load(parsed?: Document.Parsed): LoadChainResult {
    // yaml's own duplicate-key check is quadratic in the map size; checkDuplicateKeys does it with a Set.
    this.doc = parsed ?? parseDocument(this.text, CHAIN_PARSE_OPTIONS);
    if (this.doc.errors.length === 0) this.checkDuplicateKeys(this.doc.contents);
    if (this.doc.errors.length > 0) {
      for (const e of this.doc.errors) this.error('invalid_document', `invalid YAML: ${e.message}`, e.pos[0], Math.max(1, e.pos[1] - e.pos[0]));
      return this.result();
    }
    const root = this.doc.contents;
    if (!isMap(root)) {
      this.error('invalid_document', 'a chain document must be a mapping with `chain:` and `tasks:`', root?.range?.[0] ?? 0);
      return this.result();
    }
    const full = (this.options.level ?? 'full') === 'full';
    this.checkTopLevelFields(root);

    const chainNode = root.get('chain', true) as Node | undefined;
    if (chainNode === undefined) {
      this.error('invalid_document', "missing 'chain:' (the chain expression, e.g. \"plan@web-search > [draft & critique] > judge\")", 0);
      return this.result();
    }
    if (!isScalar(chainNode) || typeof chainNode.value !== 'string') {
      this.error('invalid_document', "'chain' must be a string holding the chain expression", this.offsetOf(chainNode));
      return this.result();
    }
    const tasksNode = root.get('tasks', true) as Node | undefined;
    if (tasksNode === undefined) {
      this.error('invalid_document', "missing 'tasks:' (a mapping from each handle to its task)", 0);
      return this.result();
    }
    if (!isMap(tasksNode)) {
      this.error('invalid_document', "'tasks' must be a mapping from each handle to its task", this.offsetOf(tasksNode));
      return this.result();
    }
    const js = this.doc.toJS() as Record<string, unknown>;
    const tasks = js.tasks as Record<string, unknown>;
    const taskNames = Object.keys(tasks);
    const kindOf = (h: string): string | undefined => {
      if (!Object.prototype.hasOwnProperty.call(tasks, h)) return undefined;
      const kind = (tasks[h] as { kind?: unknown } | null)?.kind;
      return typeof kind === 'string' ? kind : 'unknown';
    };

    const chainScalar = chainNode as Scalar<string>;
    const expression = chainScalar.value;
    const analysis = analyzeChain(expression, { kindOf, handles: taskNames });
    const map = scalarOffsets(chainScalar, this.text);
    for (const e of analysis.errors) this.chainError(e, map);
    const graph = analysis.graph;
    if (graph === undefined) return this.result();

    const used = new Set(graph.nodes.map((n) => n.handle));
    for (const h of taskNames) {
      if (!used.has(h)) {
        this.warn('unused_task', `task '${h}' is defined but not used in the chain`, this.keyOffset(['tasks', h]), h.length);
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
      const tier = this.checkTier(root);
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
            this.error('tier_limit', `tasks.${n.handle}.max_turns: ${turns} exceeds the ${tier.name} tier's budget of ${tier.maxTurns} turns per agentic step (it may narrow the budget, never widen it)`, this.offsetAt(['tasks', n.handle, 'max_turns']), this.scalarLength(['tasks', n.handle, 'max_turns']));
          }
          if (calls > tier.maxToolCalls) {
            this.error('tier_limit', `tasks.${n.handle}.max_tool_calls: ${calls} exceeds the ${tier.name} tier's budget of ${tier.maxToolCalls} tool calls per agentic step (it may narrow the budget, never widen it)`, this.offsetAt(['tasks', n.handle, 'max_tool_calls']), this.scalarLength(['tasks', n.handle, 'max_tool_calls']));
          }
          if (n.tools.length > 0) budgets.set(n.handle, { maxTurns: Math.min(turns, tier.maxTurns), maxToolCalls: Math.min(calls, tier.maxToolCalls) });
        }
      }
      this.checkDocumentFields(root);
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
        taskLocation: this.location(this.keyOffset(['tasks', n.handle]), n.handle.length),
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

  private checkTopLevelFields(root: YAMLMap): void {
    for (const pair of root.items as Pair<Node, Node>[]) {
      const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
      if (key !== undefined && (CHAIN_DOCUMENT_FIELDS as readonly string[]).includes(key)) continue;
      const suggestion = key === undefined ? undefined : didYouMean(key, CHAIN_DOCUMENT_FIELDS);
      const message = `unknown top-level field '${key ?? '?'}'${suggestion ? `; did you mean '${suggestion}'?` : ''} (expected ${CHAIN_DOCUMENT_FIELDS.join(', ')})`;
      const offset = (pair.key as Node | null)?.range?.[0] ?? 0;
      if (this.options.strict) this.error('invalid_document', message, offset, key?.length ?? 1);
      else this.warn('unknown_field', message, offset, key?.length ?? 1);
    }
  }

  private checkDocumentFields(root: YAMLMap): void {
    const seed = root.get('seed', true) as Node | undefined;
    if (seed !== undefined && !(isScalar(seed) && Number.isInteger(seed.value))) {
      this.error('invalid_document', "'seed' must be an integer", this.offsetOf(seed));
    }
    for (const field of ['name', 'description'] as const) {
      const n = root.get(field, true) as Node | undefined;
      if (n !== undefined && !(isScalar(n) && typeof n.value === 'string')) this.error('invalid_document', `'${field}' must be a string`, this.offsetOf(n));
    }
    const name = root.get('name', true) as Node | undefined;
    if (name !== undefined && isScalar(name) && typeof name.value === 'string' && !/^[A-Za-z0-9_-]{1,80}$/.test(name.value)) {
      this.error('invalid_document', "'name' must be 1–80 characters of letters, digits, '-' and '_' (it names the state machine)", this.offsetOf(name));
    }
    const input = root.get('input', true) as Node | undefined;
    if (input === undefined) return;
    if (!isMap(input)) {
      this.error('invalid_document', "'input' must be a mapping from field name to type (e.g. `topic: string`)", this.offsetOf(input));
      return;
    }
    const value = input.toJSON() as Record<string, unknown>;
    for (const [name, spec] of Object.entries(value)) {
      const r = InputSectionSpec.safeParse({ [name]: spec });
      if (r.success) continue;
      const shorthand = typeof spec === 'string';
      this.error(
        'invalid_document',
        `input.${name}: expected a type (${INPUT_TYPES}) or {type, required, description, default}, got ${JSON.stringify(spec)}`,
        shorthand ? this.offsetAt(['input', name]) : this.keyOffset(['input', name]),
        shorthand ? this.scalarLength(['input', name]) : name.length,
      );
    }
  }

  /** The normalised `input:` schema (empty when absent or, at topology level, unchecked and malformed). */
  private inputSchema(raw: unknown): InputSchema {
    const r = InputSectionSpec.safeParse(raw ?? {});
    if (!r.success) return { fields: [] };
    return toInputSchema(r.data, (name) => this.location(this.keyOffset(['input', name]), name.length));
  }

  private checkTier(root: YAMLMap) {
    const tiers = resolveTiers(this.options.tiers);
    const node = root.get('tier', true) as Node | undefined;
    if (node === undefined) return tiers[DEFAULT_TIER_NAME];
    const name = isScalar(node) ? node.value : undefined;
    if (typeof name === 'string' && Object.prototype.hasOwnProperty.call(tiers, name)) return tiers[name];
    const known = Object.keys(tiers);
    const suggestion = typeof name === 'string' ? didYouMean(name, known) : undefined;
    this.error(
      'tier_limit',
      `unknown tier ${JSON.stringify(name ?? null)}${suggestion ? `; did you mean '${suggestion}'?` : ''} (known tiers: ${known.join(', ')})`,
      this.offsetOf(node),
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
              this.keyOffset(['tasks', handle, key]),
              key.length,
            );
          }
          continue;
        }
        const path = ['tasks', handle, ...(issue.path as (string | number)[])];
        let got: unknown = value;
        for (const p of issue.path) got = got !== null && typeof got === 'object' ? (got as Record<string | number, unknown>)[p as string] : undefined;
        let message = `${formatPath(path)}: ${describeZodIssue(issue, got)}`;
        if (issue.code === 'invalid_union' && typeof got === 'string') {
          const s = didYouMean(got, CHAIN_TASK_KINDS);
          if (s) message += `; did you mean '${s}'?`;
        }
        this.error('invalid_task', message, this.offsetAt(path), this.scalarLength(path));
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
          this.error('invalid_task', `tasks.${handle}.${field}: ${err.message ?? String(e)}`, this.offsetInside(['tasks', handle, field], err.details?.offset));
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
        this.error('invalid_task', `tasks.${handle}.expr: invalid JSONata: ${err.message ?? String(e)}`, this.offsetInside(['tasks', handle, 'expr'], position));
        return undefined;
      }
    }
    return task;
  }

  private chainError(e: ChainExpressionError, map: readonly number[]): void {
    const start = map[Math.min(e.offset, map.length - 1)]!;
    const endChar = map[Math.min(e.offset + Math.max(1, e.length) - 1, map.length - 1)]!;
    const a = this.source.position(start);
    const b = this.source.position(endChar);
    const length = a.line === b.line ? Math.max(1, b.column - a.column + 1) : 1;
    this.errors.push(new StepforgeError(e.code, e.message, { location: { ...this.fileField(), ...a, length }, source: this.source, details: e.details }));
  }

  private error(code: string, message: string, offset: number, length = 1): void {
    if (this.errors.length >= MAX_ERRORS) return;
    this.errors.push(new StepforgeError(code, message, { location: this.location(offset, length), source: this.source }));
  }

  private warn(code: string, message: string, offset: number, length = 1): void {
    this.warnings.push({ severity: 'warning', code, message, location: this.location(offset, length) });
  }

  private fileField(): { file?: string } {
    return this.options.file === undefined ? {} : { file: this.options.file };
  }

  private location(offset: number, length = 1): SourceLocation {
    return { ...this.fileField(), ...this.source.position(offset), length: Math.max(1, length) };
  }

  private offsetOf(node: Node | null | undefined): number {
    return node?.range?.[0] ?? 0;
  }

  /** Offset of the deepest existing node along `path` (a missing field points at its task). */
  private offsetAt(path: Path): number {
    for (let n = path.length; n > 0; n--) {
      const node = this.doc.getIn(path.slice(0, n), true) as Node | undefined;
      if (node !== undefined && node !== null && typeof node === 'object' && 'range' in node && node.range) {
        // For a task (or anything) that is a mapping, point at its key: `plan:` reads better than `{`.
        return n === path.length && !isScalar(node) ? this.keyOffset(path.slice(0, n)) : n < path.length ? this.keyOffset(path.slice(0, n)) : node.range[0];
      }
    }
    return 0;
  }

  /** Source length of the scalar at `path` when it is one on a single line (so the caret underlines it), else 1. */
  private scalarLength(path: Path): number {
    const node = this.doc.getIn(path, true) as Node | undefined;
    if (node === undefined || node === null || !isScalar(node) || !node.range) return 1;
    const [start, end] = node.range;
    const text = this.text.slice(start, end);
    return text.includes('\n') || text.length === 0 ? 1 : text.length;
  }

  /** Source offset of character `index` of the string scalar at `path` (its start when unknown). */
  private offsetInside(path: Path, index: unknown): number {
    const node = this.doc.getIn(path, true) as Node | undefined;
    if (node === undefined || !isScalar(node) || typeof node.value !== 'string' || typeof index !== 'number') return this.offsetAt(path), this.scalarLength(path);
    const map = scalarOffsets(node as Scalar, this.text);
    return map[Math.max(0, Math.min(index, map.length - 1))]!;
  }

  /** Reports a key that appears twice in one mapping (at the second occurrence), at any depth. */
  private checkDuplicateKeys(node: unknown): void {
    if (isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items as Pair<Node, Node>[]) {
        const key = isScalar(pair.key) ? pair.key.value : pair.key;
        if (seen.has(key)) {
          const at = (pair.key as Node | null)?.range?.[0] ?? 0;
          this.doc.errors.push(Object.assign(new Error(`Map keys must be unique; '${String(key)}' appears twice`), { pos: [at, at + String(key).length] as [number, number] }) as never);
        }
        seen.add(key);
        this.checkDuplicateKeys(pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) this.checkDuplicateKeys(item);
    }
  }

  private readonly keyOffsetCache = new Map<unknown, Map<unknown, number>>();

  /** Offset of the key of the entry at `path` (e.g. the `plan` in `plan: {…}`). */
  private keyOffset(path: Path): number {
    const parent = path.length === 1 ? this.doc.contents : (this.doc.getIn(path.slice(0, -1), true) as Node | undefined);
    if (parent === undefined || parent === null || !isMap(parent)) return 0;
    // Indexed once per mapping: loading a 2,000-task document asks for every task's key.
    let index = this.keyOffsetCache.get(parent);
    if (index === undefined) {
      index = new Map();
      for (const p of parent.items as Pair<Node, Node>[]) {
        if (isScalar(p.key) && p.key.range && !index.has(p.key.value)) index.set(p.key.value, p.key.range[0]);
      }
      this.keyOffsetCache.set(parent, index);
    }
    return index.get(path[path.length - 1]) ?? 0;
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
