// Contenox task chain (JSON or YAML) → ContenoxDocument, with every authoring error located:
// unknown handler / operator / tool, dangling goto, duplicate task id, an unbounded cycle and
// (when macros are required) an unfilled `{{var:…}}` macro.
import { parseDocument, type Document } from 'yaml';
import { didYouMean, SourceText, StepforgeError, type Diagnostic, type SourceLocation } from '@stepforge/contract';
import { YamlDocumentLocator } from '../source/YamlDocumentLocator.js';
import type { DataPath, Locator } from '../source/Locator.js';
import { nodeLocation, PRECISE_PARSE_OPTIONS } from '../source/yamlNodes.js';
import type { GraphView } from '../graph/GraphView.js';
import { unsupportedYamlKeys } from '../source/unsupportedYamlKey.js';
import { yamlErrorMessage } from '../source/yamlErrorMessage.js';
import { aliasExpansionMessage, MAX_ALIAS_COUNT, yamlValueIssues } from '../source/yamlValueIssues.js';
import {
  CONTENOX_HANDLERS,
  CONTENOX_OPERATORS,
  type ContenoxBranch,
  type ContenoxDocument,
  type ContenoxHandler,
  type ContenoxOperator,
  type ContenoxTarget,
  type ContenoxTask,
} from './ContenoxDocument.js';
import { CONTENOX_POLICY_KEYS, contenoxToolSetOf, knownToolNames, mapContenoxTool, OWN_TOOLS } from '@stepforge/contract';
import { fillMacros } from './expandMacros.js';
import { findRuntimeMacros, unsupportedRuntimeMacro } from './runtimeMacros.js';
import { durationSeconds } from '../ir/contenoxToIr.js';
import { unboundedCycles } from '../checks/unboundedCycle.js';
import { danglingGoto, withSuggestion } from '../checks/unknownReference.js';

/** Options of loadContenoxDocument. */
export interface LoadContenoxOptions {
  readonly file?: string;
  /** Values for `{{var:NAME}}` macros (`--var` over the environment). */
  readonly vars?: Readonly<Record<string, string>>;
  /**
   * For a run: an unfilled macro without a default, and a tool set only Contenox's host provides,
   * are errors (before the run starts) rather than warnings.
   */
  readonly requireMacros?: boolean;
}

/** What the loader produced. */
export interface LoadContenoxResult {
  readonly document?: ContenoxDocument;
  readonly graph?: GraphView;
  readonly errors: StepforgeError[];
  readonly warnings: Diagnostic[];
}

/** True when parsed data is a Contenox task chain: `tasks` is a list of objects with `handler`. */
export function isContenoxChainData(data: unknown): boolean {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return false;
  const tasks = (data as { tasks?: unknown }).tasks;
  return (
    Array.isArray(tasks) &&
    tasks.length > 0 &&
    tasks.every((t) => t !== null && typeof t === 'object' && !Array.isArray(t) && 'handler' in t)
  );
}

type Obj = Record<string, unknown>;

/** Loads a Contenox chain; `parsed` is a `yaml` parse of `text` the caller already made. */
export function loadContenoxDocument(
  text: string,
  options: LoadContenoxOptions = {},
  parsed?: Document,
  source?: SourceText,
  fast?: { readonly data: unknown; readonly locator: Locator },
): LoadContenoxResult {
  const src = source ?? new SourceText(text, options.file);
  // The fast parse serves a valid chain; any error is reported from the precise `yaml` parse.
  if (fast !== undefined && parsed === undefined) {
    try {
      const quick = loadParsed(fast.data, [], fast.locator, src, options);
      if (quick.errors.length === 0) return quick;
    } catch (e) {
      // The fast locator declines what only the precise parse can place (a warning inside a string).
      if (!(e instanceof Error && e.name === 'FastPathDeclined')) throw e;
    }
  }
  const doc = parsed ?? parseDocument(text, PRECISE_PARSE_OPTIONS);
  const locator = new YamlDocumentLocator(doc.contents ?? undefined, src);
  if (doc.errors.length > 0) return loadParsed(undefined, doc.errors, locator, src, options);
  // As the chain and DSL loaders do: an alias without its anchor or inside its own value (toJS would
  // throw, or build a value that contains itself), a complex key, and a tag outside plain data
  // (`!!binary`, `!foo`) are refused where they are written, before the document becomes data.
  const issues = [...unsupportedYamlKeys(doc.contents), ...yamlValueIssues(doc, text).issues];
  if (issues.length > 0) return { errors: issues.map((k) => yamlIssue(src, k.offset, k.length, k.message)), warnings: [] };
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    // Aliases that expand too far: blame the first alias.
    const at = yamlValueIssues(doc, text).firstAlias ?? { offset: 0, length: 1 };
    return { errors: [yamlIssue(src, at.offset, at.length, aliasExpansionMessage(e))], warnings: [] };
  }
  return loadParsed(data, [], locator, src, options);
}

function yamlIssue(src: SourceText, offset: number, length: number, message: string): StepforgeError {
  const { line, column } = src.position(offset);
  return new StepforgeError('invalid_document', message, { location: { file: src.file, line, column, length }, source: src });
}

function loadParsed(
  data: unknown,
  yamlErrors: Document['errors'],
  locator: Locator,
  src: SourceText,
  options: LoadContenoxOptions,
): LoadContenoxResult {
  const errors: StepforgeError[] = [];
  const warnings: Diagnostic[] = [];
  const at = (path: DataPath): SourceLocation => locator.at(path).location;
  const keyAt = (path: DataPath, key: string): SourceLocation => locator.keyAt(path, key) ?? at([...path, key]);
  const fail = (code: string, message: string, location: SourceLocation, hint?: string, details?: Record<string, unknown>): void => {
    errors.push(
      new StepforgeError(code, message, {
        location,
        source: src,
        ...(hint !== undefined ? { hint } : {}),
        ...(details ? { details } : {}),
      }),
    );
  };
  if (yamlErrors.length > 0) {
    const e = yamlErrors[0]!;
    fail(
      'invalid_document',
      `invalid JSON/YAML: ${yamlErrorMessage(e)}`,
      nodeLocation(src, { range: [e.pos[0], e.pos[1], e.pos[1]] } as never),
    );
    return { errors, warnings };
  }
  const vars = options.vars ?? {};
  // Macros first: every later check sees the values the run will use.
  // `path` is one stack, pushed and popped as the walk goes: a path array per value of the document
  // was most of what loading a large chain allocated, and only an unfilled macro reads it (a copy).
  const fill = (v: unknown, path: PropertyKey[]): unknown => {
    if (typeof v === 'string') {
      if (!v.includes('{{')) return v;
      // A macro Contenox expands that means nothing here stays as written: said, never silently.
      for (const use of findRuntimeMacros(v)) {
        const why = unsupportedRuntimeMacro(use);
        if (why !== undefined)
          warnings.push({
            severity: 'warning',
            code: 'unsupported_macro',
            message: `macro ${v.slice(use.start, use.end)} is kept as written: ${why}`,
            location: locator.inString([...path], v, use.start, use.end),
          });
      }
      return fillMacros(v, vars, (use) => {
        const location = locator.inString([...path], v, use.start, use.end);
        const message =
          use.fallbackVar === undefined
            ? `macro {{var:${use.name}}} has no value`
            : `macro {{var:${use.name}|var:${use.fallbackVar}}} has no value: neither ${use.name} nor ${use.fallbackVar} is set`;
        const hint =
          use.fallbackVar === undefined
            ? `pass --var ${use.name}=VALUE, set ${use.name} in the environment, or write a default: {{var:${use.name}|VALUE}}`
            : `pass --var ${use.fallbackVar}=VALUE (or --var ${use.name}=VALUE), or set one of them in the environment`;
        if (options.requireMacros) fail('unfilled_macro', message, location, hint, { name: use.name });
        else warnings.push({ severity: 'warning', code: 'unfilled_macro', message: `${message} (a run needs one: ${hint})`, location });
      });
    }
    // Copied only where a macro was filled: a large chain has few macros, and copying every task
    // object was most of what loading it allocated.
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const x = v[i] as unknown;
        path.push(i);
        const y = fill(x, path);
        path.pop();
        if (y !== x) (out ??= [...v])[i] = y;
      }
      return out ?? v;
    }
    if (v !== null && typeof v === 'object') {
      let out: Obj | undefined;
      for (const k in v) {
        const x = (v as Obj)[k];
        path.push(k);
        const y = fill(x, path);
        path.pop();
        if (y !== x) (out ??= { ...(v as Obj) })[k] = y;
      }
      return out ?? v;
    }
    return v;
  };
  const root = fill(data, []) as Obj;
  if (!isContenoxChainData(root)) {
    fail(
      'invalid_document',
      'not a Contenox task chain: expected `tasks`, a list of objects each with a `handler`',
      at(['tasks']),
      'write {"id": "…", "tasks": [{"id": "…", "handler": "chat_completion", "transition": {"branches": [{"operator": "default", "goto": "end"}]}}]}',
    );
    return { errors, warnings };
  }
  const rawTasks = root.tasks as Obj[];
  // Ids first, so a goto can name a task written after it.
  const index = new Map<string, number>();
  rawTasks.forEach((t, i) => {
    const id = t.id;
    if (typeof id !== 'string' || id === '') {
      fail(
        'invalid_document',
        'a task needs an `id` (a non-empty string)',
        at(['tasks', i]),
        'give every task a unique id; branches name it in `goto`',
      );
      return;
    }
    if (id === 'end')
      fail('invalid_document', 'a task cannot be named \'end\': `goto: "end"` ends the chain', at(['tasks', i, 'id']), 'rename the task');
    if (index.has(id)) {
      fail(
        'duplicate_task_id',
        `task id '${id}' is used twice (first by task ${index.get(id)! + 1})`,
        at(['tasks', i, 'id']),
        'task ids must be unique: a goto names exactly one task',
        { id },
      );
      return;
    }
    index.set(id, i);
  });
  const target = (raw: unknown, path: PropertyKey[], from: string): ContenoxTarget | undefined => {
    if (raw === undefined || raw === null || raw === '' || raw === 'end') return 'end';
    if (typeof raw !== 'string') {
      fail('invalid_document', '`goto` must be a task id or "end"', at(path));
      return undefined;
    }
    const to = index.get(raw);
    if (to !== undefined) return to;
    const f = danglingGoto(from, withSuggestion(raw, index.keys()), index.keys());
    fail(f.code, f.message, at(path), f.hint, f.details);
    return undefined;
  };
  const tasks: ContenoxTask[] = [];
  rawTasks.forEach((t, i) => {
    const id = typeof t.id === 'string' ? t.id : `#${i + 1}`;
    const handler = t.handler;
    if (typeof handler !== 'string' || !(CONTENOX_HANDLERS as readonly string[]).includes(handler)) {
      const near = typeof handler === 'string' ? didYouMean(handler, CONTENOX_HANDLERS) : undefined;
      fail(
        'unknown_handler',
        `task '${id}' has handler ${JSON.stringify(handler)}, which Contenox does not define${near ? ` (did you mean '${near}'?)` : ''}`,
        at(['tasks', i, 'handler']),
        `use one of: ${CONTENOX_HANDLERS.join(', ')}`,
        { handler },
      );
    }
    const transition = (t.transition ?? {}) as Obj;
    const rawBranches = Array.isArray(transition.branches) ? (transition.branches as Obj[]) : [];
    if (transition.branches !== undefined && !Array.isArray(transition.branches))
      fail('invalid_document', '`transition.branches` must be a list', at(['tasks', i, 'transition', 'branches']));
    const branches: ContenoxBranch[] = [];
    rawBranches.forEach((b, j) => {
      const path = ['tasks', i, 'transition', 'branches', j];
      const op = b.operator;
      if (typeof op !== 'string' || !(CONTENOX_OPERATORS as readonly string[]).includes(op)) {
        const near = typeof op === 'string' ? didYouMean(op, CONTENOX_OPERATORS) : undefined;
        fail(
          'unknown_operator',
          `branch ${j + 1} of task '${id}' has operator ${JSON.stringify(op)}${near ? ` (did you mean '${near}'?)` : ''}`,
          at([...path, 'operator']),
          `use one of: ${CONTENOX_OPERATORS.join(', ')}`,
          { operator: op },
        );
        return;
      }
      const goto = target(b.goto, [...path, 'goto'], id);
      const when = b.when === undefined || b.when === null ? '' : String(b.when);
      let edge: readonly [number, ContenoxTarget] | undefined;
      if (op === 'edge_traversed_at_least') {
        const m = typeof b.edge === 'string' ? /^\s*([^\s>-][^>]*?)\s*->\s*(\S.*?)\s*$/.exec(b.edge) : null;
        const a = m ? index.get(m[1]!) : undefined;
        // As in Contenox, the edge may lead to `end` (the chain ending from FROM); Contenox counts an
        // edge only when the next task starts, so that count stays 0 (see contenoxToIr).
        const z = m ? (m[2] === 'end' ? ('end' as const) : index.get(m[2]!)) : undefined;
        if (a === undefined || z === undefined) {
          fail(
            'invalid_edge',
            `branch ${j + 1} of task '${id}' counts edge ${JSON.stringify(b.edge)}: expected "FROM->TO" naming two tasks of this chain (TO may be end)`,
            at([...path, 'edge']),
            'write "edge": "review->run_tools" (the counter goes up each time that transition is taken)',
          );
          return;
        }
        if (!/^\d+$/.test(when.trim())) {
          fail(
            'invalid_document',
            `branch ${j + 1} of task '${id}': edge_traversed_at_least needs a whole number in \`when\`, got ${JSON.stringify(b.when)}`,
            at([...path, 'when']),
            'write "when": "6"',
          );
          return;
        }
        edge = [a, z];
      }
      if (goto !== undefined)
        branches.push({ operator: op as ContenoxOperator, when, goto, ...(edge ? { edge } : {}), location: at(path) });
    });
    const onFailureRaw = transition.on_failure;
    let onFailure: number | undefined;
    if (typeof onFailureRaw === 'string' && onFailureRaw !== '' && onFailureRaw !== 'end') {
      const to = target(onFailureRaw, ['tasks', i, 'transition', 'on_failure'], id);
      if (typeof to === 'number') onFailure = to;
    }
    checkInputVar(t, i, id, index, at, fail);
    checkTaskFields(t, i, id, at, keyAt, fail, warnings);
    const tools = taskTools(t, i, id, at, fail, warnings, options);
    checkToolsPolicies(t, i, id, at, fail);
    if (typeof handler === 'string' && (CONTENOX_HANDLERS as readonly string[]).includes(handler)) {
      tasks.push({
        id,
        index: i,
        handler: handler as ContenoxHandler,
        data: t,
        // Contenox tries every other branch, in order, before a `default`, wherever the default is
        // written: a default written first is still the last resort.
        branches: [...branches.filter((b) => b.operator !== 'default'), ...branches.filter((b) => b.operator === 'default')],
        ...(onFailure !== undefined ? { onFailure } : {}),
        tools,
        location: at(['tasks', i]),
      });
    }
  });
  if (errors.length === 0)
    for (const { finding: f, location } of unboundedCycles(tasks)) fail(f.code, f.message, location, f.hint, f.details);
  const document: ContenoxDocument = {
    ...(typeof root.id === 'string' ? { id: root.id } : {}),
    ...(typeof root.description === 'string' ? { description: root.description } : {}),
    ...(typeof root.token_limit === 'number' ? { tokenLimit: root.token_limit } : {}),
    tasks,
  };
  return { document, graph: contenoxGraphView(document), errors, warnings };
}

/** The fields of a task and of its execute_config, as Contenox's schema defines them, by type. */
const TASK_FIELDS: Readonly<Record<string, 'string' | 'integer' | 'object'>> = {
  id: 'string',
  description: 'string',
  handler: 'string',
  system_instruction: 'string',
  execute_config: 'object',
  tools: 'object',
  print: 'string',
  prompt_template: 'string',
  output_template: 'string',
  input_var: 'string',
  input_max_bytes: 'integer',
  transition: 'object',
  timeout: 'string',
  retry_on_failure: 'integer',
};
const EXECUTE_CONFIG_FIELDS = [
  'model',
  'models',
  'provider',
  'providers',
  'temperature',
  'tools',
  'hide_tools',
  'tools_policies',
  'pass_clients_tools',
  'think',
  'max_tokens',
  'shift',
  'retry_policy',
];

/**
 * A field of the wrong type is refused, as Contenox's decoder refuses it (`"retry_on_failure": "two"`
 * would otherwise be no retry at all, silently), and so is a `timeout` that is no Go duration (Contenox
 * fails the task when it starts). A key Contenox does not define is ignored there, as here, with a
 * warning: it is most often a misspelt one.
 */
function checkTaskFields(
  t: Obj,
  i: number,
  id: string,
  at: (p: DataPath) => SourceLocation,
  keyAt: (p: DataPath, key: string) => SourceLocation,
  fail: (c: string, m: string, l: SourceLocation, h?: string, d?: Record<string, unknown>) => void,
  warnings: Diagnostic[],
): void {
  for (const [key, value] of Object.entries(t)) {
    const type = TASK_FIELDS[key];
    if (type === undefined) {
      const near = didYouMean(key, Object.keys(TASK_FIELDS));
      warnings.push({
        severity: 'warning',
        code: 'unknown_key',
        message: `task '${id}' has key '${key}', which Contenox does not define: it has no effect${near ? ` (did you mean '${near}'?)` : ''}`,
        location: keyAt(['tasks', i], key),
      });
      continue;
    }
    if (value === null || key === 'id' || key === 'handler' || key === 'input_var' || key === 'tools') continue;
    // A scalar where a string goes is that text, as Contenox's YAML decoder reads it (`timeout: 0`).
    const ok =
      type === 'string'
        ? typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
        : type === 'integer'
          ? typeof value === 'number' && Number.isInteger(value)
          : typeof value === 'object' && !Array.isArray(value);
    if (!ok) {
      const got = Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'an object' : JSON.stringify(value);
      fail(
        'invalid_document',
        `task '${id}': \`${key}\` must be ${type === 'integer' ? 'a whole number' : type === 'string' ? 'a string' : 'an object'}, got ${got}`,
        at(['tasks', i, key]),
        type === 'integer' ? `write "${key}": 2` : type === 'string' ? `write "${key}": "…"` : `write "${key}": {…}`,
      );
    } else if (key === 'timeout' && String(value).trim() !== '0' && durationSeconds(String(value)) === undefined) {
      fail(
        'invalid_document',
        `task '${id}': \`timeout\` ${JSON.stringify(value)} is not a Go duration (a number with a unit)`,
        at(['tasks', i, key]),
        'write a duration such as "30s", "2m" or "1m30s"',
      );
    }
  }
  const config = t.execute_config;
  if (config !== null && typeof config === 'object' && !Array.isArray(config))
    for (const key of Object.keys(config)) {
      if (EXECUTE_CONFIG_FIELDS.includes(key)) continue;
      const near = didYouMean(key, EXECUTE_CONFIG_FIELDS);
      warnings.push({
        severity: 'warning',
        code: 'unknown_key',
        message: `task '${id}': execute_config has key '${key}', which Contenox does not define: it has no effect${near ? ` (did you mean '${near}'?)` : ''}`,
        location: keyAt(['tasks', i, 'execute_config'], key),
      });
    }
}

/**
 * `input_var` names a variable of the run: `input`, a task's output (its id), `previous_output`, or
 * a failure's message (`last_error`, `<task id>_error`). Contenox fails the run when it reaches a
 * task whose variable does not exist; here that is known before the run.
 */
function checkInputVar(
  t: Obj,
  i: number,
  id: string,
  index: ReadonlyMap<string, number>,
  at: (p: DataPath) => SourceLocation,
  fail: (c: string, m: string, l: SourceLocation, h?: string, d?: Record<string, unknown>) => void,
): void {
  const v = t.input_var;
  if (v === undefined || v === null || v === '') return;
  const path = ['tasks', i, 'input_var'];
  if (typeof v !== 'string') {
    fail('invalid_document', `task '${id}': \`input_var\` must be a string (a task id or "input")`, at(path), 'write "input_var": "input"');
    return;
  }
  const builtIn = ['input', 'previous_output', 'last_error'];
  if (builtIn.includes(v) || index.has(v) || (v.endsWith('_error') && index.has(v.slice(0, -'_error'.length)))) return;
  const names = [...builtIn, ...index.keys()];
  const near = didYouMean(v, names);
  fail(
    'unknown_input_var',
    `task '${id}' reads input_var '${v}', which is no variable of this chain${near ? ` (did you mean '${near}'?)` : ''}`,
    at(path),
    `name the chain's input ("input"), a task id (its output) or "previous_output": ${names.join(', ')}`,
    { inputVar: v },
  );
}

/** The tools a task names (execute_config.tools, and a `tools` task's `tools.name`), mapped to ours. */
/** Tool sets Contenox's own host provides to its chains (missions, the oracle, git, sessions). */
const HOST_TOOL_SETS = ['oracle', 'mission', 'git', 'shell_session', 'native-fs-browse'];

function taskTools(
  t: Obj,
  i: number,
  id: string,
  at: (p: DataPath) => SourceLocation,
  fail: (c: string, m: string, l: SourceLocation, h?: string, d?: Record<string, unknown>) => void,
  warnings: Diagnostic[],
  options: LoadContenoxOptions,
): string[] {
  const out: string[] = [];
  const add = (name: unknown, path: PropertyKey[]): void => {
    if (typeof name !== 'string') return;
    const mapped = mapContenoxTool(name);
    if (!mapped && HOST_TOOL_SETS.includes(name) && !options.requireMacros) {
      // Contenox's host supplies these (missions, the oracle): the chain is valid; a run needs the tool.
      warnings.push({
        severity: 'warning',
        code: 'unknown_tool',
        message: `task '${id}' names Contenox's host tool set '${name}', which has no counterpart here: a run refuses it (tools that exist: ${knownToolNames().join(', ')})`,
        location: at(path),
      });
      return;
    }
    if (!mapped) {
      const near = didYouMean(name, knownToolNames());
      fail(
        'unknown_tool',
        `task '${id}' names tool '${name}', which does not exist here${near ? ` (did you mean '${near}'?)` : ''}`,
        at(path),
        `tools that exist: ${knownToolNames().join(', ')}`,
        { tool: name },
      );
      return;
    }
    for (const m of mapped) if (!out.includes(m)) out.push(m);
  };
  const config = t.execute_config as Obj | undefined;
  const hidden = new Set(
    Array.isArray(config?.hide_tools)
      ? (config!.hide_tools as unknown[]).flatMap((h) => (typeof h === 'string' ? (mapContenoxTool(h) ?? []) : []))
      : [],
  );
  if (config && Array.isArray(config.tools)) {
    const names = config.tools as unknown[];
    // Contenox's allowlist patterns: "*" grants every tool there is, and with it "!name" takes one
    // out again; an exclusion without "*" grants nothing, as there.
    const excluded = new Set<string>();
    names.forEach((n, k) => {
      if (typeof n !== 'string' || !n.startsWith('!')) return;
      const before = out.length;
      add(n.slice(1), ['tasks', i, 'execute_config', 'tools', k]);
      for (const m of out.splice(before)) excluded.add(m);
    });
    names.forEach((n, k) => {
      if (n === '*') {
        for (const m of OWN_TOOLS) if (!excluded.has(m) && !out.includes(m)) out.push(m);
      } else if (typeof n !== 'string' || !n.startsWith('!')) add(n, ['tasks', i, 'execute_config', 'tools', k]);
    });
  }
  if (t.handler === 'tools') {
    const call = t.tools as Obj | undefined;
    if (!call || typeof call.name !== 'string')
      fail(
        'invalid_document',
        `task '${id}' (handler tools) needs \`tools\`: {"name": "<tool set>", "tool_name": "<tool>", "args": {…}}`,
        at(['tasks', i]),
      );
    else add(call.name, ['tasks', i, 'tools', 'name']);
  }
  return out.filter((n) => !hidden.has(n));
}

/**
 * `execute_config.tools_policies`: each key a tool set (or one of our tools), each of its keys one
 * Contenox defines for that set, each value a scalar. The runtime narrows the project's policy with
 * them, so a misspelt key would be a limit that silently does not hold: it is refused here.
 */
function checkToolsPolicies(
  t: Obj,
  i: number,
  id: string,
  at: (p: DataPath) => SourceLocation,
  fail: (c: string, m: string, l: SourceLocation, h?: string, d?: Record<string, unknown>) => void,
): void {
  const config = t.execute_config as Obj | undefined;
  const policies = config?.tools_policies;
  if (policies === undefined || policies === null) return;
  const base = ['tasks', i, 'execute_config', 'tools_policies'];
  if (typeof policies !== 'object' || Array.isArray(policies)) {
    fail(
      'invalid_document',
      `task '${id}': \`tools_policies\` must map a tool set to its policy keys`,
      at(base),
      'write "tools_policies": {"local_shell": {"_allowed_commands": "ls,cat"}}',
    );
    return;
  }
  for (const [set, keys] of Object.entries(policies as Obj)) {
    const known = contenoxToolSetOf(set);
    if (known === undefined) {
      const near = didYouMean(set, Object.keys(CONTENOX_POLICY_KEYS));
      fail(
        'unknown_tool',
        `task '${id}' sets tools_policies for '${set}', which has no policy keys here${near ? ` (did you mean '${near}'?)` : ''}`,
        at([...base, set]),
        `tool sets with policies: ${Object.keys(CONTENOX_POLICY_KEYS).join(', ')}`,
        { tool: set },
      );
      continue;
    }
    if (keys === null || typeof keys !== 'object' || Array.isArray(keys)) {
      fail('invalid_document', `task '${id}': tools_policies.${set} must be an object of policy keys`, at([...base, set]));
      continue;
    }
    const allowed = CONTENOX_POLICY_KEYS[known]!;
    for (const [key, value] of Object.entries(keys as Obj)) {
      if (!allowed.includes(key)) {
        const near = didYouMean(key, allowed);
        fail(
          'unknown_policy_key',
          `task '${id}': tools_policies.${set} has key '${key}', which ${known} does not define${near ? ` (did you mean '${near}'?)` : ''}`,
          at([...base, set, key]),
          `keys of ${known}: ${allowed.join(', ')}`,
          { tool: set, key },
        );
      } else if (value !== null && typeof value === 'object') {
        fail(
          'invalid_document',
          `task '${id}': tools_policies.${set}.${key} must be a string (a comma-separated list or a number), not ${Array.isArray(value) ? 'a list' : 'an object'}`,
          at([...base, set, key]),
          `write "${key}": "ls,cat"`,
        );
      }
    }
  }
}

/** Nodes are the tasks in source order (kind: the handler); edges every transition between two tasks. */
export function contenoxGraphView(doc: ContenoxDocument): GraphView {
  const pos = new Map(doc.tasks.map((t, k) => [t.index, k]));
  const edges = new Set<string>();
  const list: [number, number][] = [];
  const add = (a: number, b: number | undefined) => {
    if (b === undefined) return;
    const key = `${a},${b}`;
    if (!edges.has(key)) {
      edges.add(key);
      list.push([a, b]);
    }
  };
  doc.tasks.forEach((t, k) => {
    for (const b of t.branches) if (b.goto !== 'end') add(k, pos.get(b.goto));
    if (t.onFailure !== undefined) add(k, pos.get(t.onFailure));
  });
  list.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  return { nodes: doc.tasks.map((t) => ({ handle: t.id, kind: t.handler, tools: t.tools })), edges: list };
}
