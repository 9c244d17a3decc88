// Contenox task chain → IR: one step per task, and a route per task (IrWorkflow.routes) that the
// back end lowers to a Choice state. Handlers map onto our machinery: chat_completion and route are
// model steps (a chat_completion granted tools is our agent loop, which runs the tool calls itself),
// tools is a tool step, noop and execute_tool_calls pass their input through, raise_error fails.
import type { ContenoxDocument, ContenoxTask } from '../contenox/ContenoxDocument.js';
import { mapContenoxTool, RUN_META_KEY } from '@stepforge/contract';
import { DEFAULT_AGENT_BUDGET, secretsIn } from './chainToIr.js';
import type { IrDocument, IrExpr, IrRetry, IrRoute, IrStep } from './Ir.js';
import { DATE_LAYOUT, goLayoutPicture, RFC3339_LAYOUT, unsupportedRuntimeMacro, type RuntimeMacroUse } from '../contenox/runtimeMacros.js';

/** The error a `raise_error` task ends the run with. */
export const CONTENOX_RAISE_ERROR = 'ContenoxRaiseError';

/** The error a task ends the run with when no branch matches and it has no default. */
export const CONTENOX_NO_TRANSITION = 'ContenoxNoTransition';

/**
 * The chain's input: the text it was given (`{"input": text}` from the CLI), else the whole input
 * object; no input at all (`{}`, an empty standard input) is the empty text, as in Contenox, whose
 * chain input is a string.
 */
const CHAIN_INPUT = '($exists($input.input) ? $input.input : $count($keys($input)) = 0 ? "" : $input)';

type Obj = Readonly<Record<string, unknown>>;

/** Lowers a loaded Contenox chain into the IR. */
export function contenoxToIr(doc: ContenoxDocument, options: { name: string; file?: string; source?: string }): IrDocument {
  const pos = new Map(doc.tasks.map((t, k) => [t.index, k]));
  const handOvers = toolHandOvers(doc);
  const ctx: TextContext = {
    doc,
    stepOf: new Map(doc.tasks.map((t, k) => [t.id, k])),
    countedEdges: new Map(),
    keepsErrors: doc.tasks.some((t) => t.onFailure !== undefined),
  };
  const steps = doc.tasks.map((t) => taskStep(t, doc, handOvers, ctx));
  const readsErrors = steps.some((s) => s.input?.kind === 'jsonata' && s.input.jsonata.includes(`$${CONTENOX_ERRORS}.`));
  const routes: IrRoute[] = doc.tasks.map((t) => ({
    ...(handOvers.chats.has(t.id)
      ? { evaluate: HANDED_OVER_EVALUATION }
      : handOvers.executors.has(t.id)
        ? { evaluate: EXECUTED_EVALUATION }
        : evaluation(t)),
    branches: t.branches.map((b) => ({
      operator: b.operator,
      when: b.when.trim() === '' ? b.when : b.operator === 'edge_traversed_at_least' ? b.when.trim() : b.when,
      goto: b.goto === 'end' ? ('end' as const) : pos.get(b.goto)!,
      ...(b.edge ? { edge: [pos.get(b.edge[0])!, b.edge[1] === 'end' ? ('end' as const) : pos.get(b.edge[1])!] as const } : {}),
    })),
    ...(t.onFailure !== undefined ? { onFailure: pos.get(t.onFailure)! } : {}),
    ...(t.handler === 'raise_error' ? { raise: CONTENOX_RAISE_ERROR } : {}),
    // Routing only: the label picks the branch, and the task's output is its input, unchanged.
    ...(t.handler === 'route' ? { output: { kind: 'jsonata' as const, ...inputOf(t, doc) } } : {}),
  }));
  return {
    name: options.name,
    ...(doc.id !== undefined && doc.id !== options.name ? { displayName: doc.id } : {}),
    format: 'contenox',
    workflow: {
      steps,
      edges: [],
      routes,
      ...(ctx.countedEdges.size > 0 ? { countedEdges: [...ctx.countedEdges.values()] } : {}),
      ...(readsErrors ? { keepsErrors: true } : {}),
    },
    file: options.file,
    source: options.source,
  };
}

/**
 * A chat_completion's transition value when it hands its tool calls over: `tool_call` when the model
 * asked for tools, else `executed` (`$out` is the model turn's reply: done, toolCalls, output).
 */
const HANDED_OVER_EVALUATION = '($out.done = true or $count($out.toolCalls) = 0) ? "executed" : "tool_call"';
/** An execute_tool_calls task's value (`$out` is the list of results): it ran calls, or found none. */
const EXECUTED_EVALUATION = '$count($out) > 0 ? "tools_executed" : "no_calls_found"';

/**
 * Which chat_completion tasks hand their tool calls to an execute_tool_calls task, as Contenox runs
 * them: a chat_completion granted tools with a branch on `tool_call` that goes to an
 * execute_tool_calls task returns after one model turn, and that task runs the calls (then, as a
 * rule, goes back to the chat for the next turn). Each such executor runs the calls of the chat its
 * `input_var` names, else of the chat that routes to it.
 */
function toolHandOvers(doc: ContenoxDocument): { chats: Set<string>; executors: Map<string, string> } {
  const chats = new Set<string>();
  const executors = new Map<string, string>();
  const byIndex = new Map(doc.tasks.map((t) => [t.index, t]));
  for (const t of doc.tasks) {
    if (t.handler !== 'chat_completion' || t.tools.length === 0) continue;
    for (const b of t.branches) {
      const to = b.goto === 'end' ? undefined : byIndex.get(b.goto);
      if (b.operator === 'edge_traversed_at_least' || b.when.trim() !== 'tool_call' || to?.handler !== 'execute_tool_calls') continue;
      chats.add(t.id);
      const named = to.data.input_var;
      if (!executors.has(to.id) || named === t.id)
        executors.set(
          to.id,
          typeof named === 'string' && doc.tasks.some((x) => x.id === named && x.handler === 'chat_completion') && chats.has(named)
            ? named
            : t.id,
        );
    }
  }
  return { chats, executors };
}

/** What the branches of a task compare: the handler's transition token, or the route's label. */
function evaluation(t: ContenoxTask): Pick<IrRoute, 'evaluate' | 'ignoreCase'> {
  switch (t.handler) {
    case 'route':
      return { evaluate: '$trim($string($out))', ignoreCase: true };
    // Our agent loop has run the tool calls by the time the step ends: a turn without pending calls.
    case 'chat_completion':
      return { evaluate: '"executed"' };
    case 'tools':
      return { evaluate: '"tools_executed"' };
    case 'execute_tool_calls':
      return { evaluate: '"no_calls_found"' };
    case 'noop':
      return { evaluate: '"noop"' };
    case 'raise_error':
      return { evaluate: '""' };
  }
}

/** The task's input: `input_var` (`input` is the chain input, a task id that task's output), else the previous output. */
function inputOf(t: ContenoxTask, doc: ContenoxDocument): { jsonata: string; reads: string[] } {
  const v = t.data.input_var;
  if (v === 'input') return { jsonata: CHAIN_INPUT, reads: [] };
  if (typeof v === 'string' && v !== '' && doc.tasks.some((x) => x.id === v)) return { jsonata: `\`${v}\``, reads: [v] };
  return { jsonata: '$prev', reads: [] };
}

/** The variable a routed workflow counts the transition from step `from` to step `to` in (step indices). */
export function edgeCounterVariable(from: number, to: number): string {
  return `edge${from}to${to}`;
}

/** The variable that keeps the errors on_failure took, as Contenox's `last_error` and `<task id>_error` (see IrWorkflow.keepsErrors). */
export const CONTENOX_ERRORS = 'contenox_errors';

/** What Go's text/template prints for a key its data does not have, as Contenox renders a prompt. */
const NO_VALUE = '<no value>';

/** What a chain's texts need from the whole chain while they are compiled. */
interface TextContext {
  readonly doc: ContenoxDocument;
  /** Task id → step index. */
  readonly stepOf: ReadonlyMap<string, number>;
  /** Counts the texts read (`{{edge_count:…}}`), as step index pairs `from>to`. */
  readonly countedEdges: Map<string, readonly [number, number]>;
  /** Whether some task has on_failure (only then can an error be kept). */
  readonly keepsErrors: boolean;
}

/**
 * A task's text as JSONata string concatenation, as Contenox renders it: its macros first
 * (runtimeMacros: `{{date}}`, `{{now}}`, `{{chain:id}}`, `{{tools}}`, `{{toolservice:…}}`,
 * `{{edge_count:A->B}}`), then, in a prompt_template (`template` set), the Go-template
 * placeholders `{{.input}}` / `{{.task_id}}` / `{{.previous_output}}` / `{{.last_error}}` /
 * `{{.task_id_error}}`; any other `{{.name}}` is `<no value>`, as Go prints a missing key.
 * `dynamic` is false when the text is the same in every run (then `jsonata` is a string literal).
 */
function textJsonata(
  text: string,
  t: ContenoxTask,
  ctx: TextContext,
  reads: string[],
  template?: { readonly input: string },
): { jsonata: string; dynamic: boolean } {
  const parts: string[] = [];
  let literal = '';
  let dynamic = false;
  const push = (jsonata: string): void => {
    if (literal !== '') parts.push(JSON.stringify(literal));
    literal = '';
    parts.push(jsonata);
    dynamic = true;
  };
  const pattern = template
    ? /\{\{\s*\.([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}|\{\{([a-zA-Z0-9_]+)(?::([^}]*))?\}\}/g
    : /()\{\{([a-zA-Z0-9_]+)(?::([^}]*))?\}\}/g;
  let at = 0;
  for (const m of text.matchAll(pattern)) {
    literal += text.slice(at, m.index);
    at = m.index! + m[0].length;
    if (m[1]) {
      const name = m[1];
      if (name === 'input') push(`$string(${template!.input})`);
      // What the task that ran before this one produced (Contenox's `previous_output` variable).
      else if (name === 'previous_output' && !ctx.stepOf.has(name)) push('$string($prev)');
      else if (ctx.stepOf.has(name)) {
        if (!reads.includes(name)) reads.push(name);
        push(`$string(\`${name}\`)`);
      } else if (ctx.keepsErrors && keptError(name, ctx.doc))
        push(`( $e := $${CONTENOX_ERRORS}.\`${name}\`; $exists($e) ? $e : ${JSON.stringify(NO_VALUE)} )`);
      else literal += NO_VALUE;
      continue;
    }
    const use = { namespace: m[2]!, ...(m[3] !== undefined ? { payload: m[3].trim() } : {}), start: 0, end: 0 };
    const value = macroJsonata(use, t, ctx, template === undefined);
    if (value === undefined) literal += m[0];
    else if (value.static !== undefined) literal += value.static;
    else push(value.jsonata!);
  }
  literal += text.slice(at);
  if (literal !== '' || parts.length === 0) parts.push(JSON.stringify(literal));
  return { jsonata: parts.join(' & '), dynamic };
}

/** Whether Contenox may set the variable `name` when a failure goes to on_failure: `last_error`, `<task id>_error`. */
function keptError(name: string, doc: ContenoxDocument): boolean {
  if (name === 'last_error') return true;
  return name.endsWith('_error') && doc.tasks.some((x) => x.onFailure !== undefined && x.id === name.slice(0, -'_error'.length));
}

/** The time Contenox expands its time macros with: when the chain starts (the execution's start). */
const START_MILLIS = '$toMillis($states.context.Execution.StartTime)';

/**
 * One runtime macro's value: a text fixed at compile time (`static`), JSONata evaluated when the
 * step runs, or undefined when it stays as written (see unsupportedRuntimeMacro, which warns).
 */
function macroJsonata(
  use: RuntimeMacroUse,
  t: ContenoxTask,
  ctx: TextContext,
  stablePrefix: boolean,
): { static?: string; jsonata?: string } | undefined {
  if (unsupportedRuntimeMacro(use) !== undefined) return undefined;
  const p = use.payload ?? '';
  switch (use.namespace) {
    case 'date':
      return { jsonata: `$fromMillis(${START_MILLIS}, ${JSON.stringify(goLayoutPicture(p || DATE_LAYOUT))})` };
    case 'now':
      // In a system_instruction Contenox's default layout is the day's (the prompt cache's prefix stays the same all day).
      return {
        jsonata: `$fromMillis(${START_MILLIS}, ${JSON.stringify(goLayoutPicture(p || (stablePrefix ? DATE_LAYOUT : RFC3339_LAYOUT)))})`,
      };
    case 'chain':
      return { static: ctx.doc.id ?? '' };
    case 'edge_count': {
      const [from, to] = p.split('->', 2).map((x) => x.trim());
      const a = from !== undefined ? ctx.stepOf.get(from) : undefined;
      const z = to !== undefined ? ctx.stepOf.get(to) : undefined;
      // An edge no transition can take (to `end`, or naming no task) is never counted: 0, as there.
      if (a === undefined || z === undefined) return { static: '0' };
      ctx.countedEdges.set(`${a}>${z}`, [a, z]);
      return { jsonata: `$string($${edgeCounterVariable(a, z)})` };
    }
    case 'tools':
    case 'toolservice': {
      const sets = grantedToolSets(t);
      const [cmd, arg] = [p.split(' ')[0], p.slice(p.indexOf(' ') + 1).trim()];
      if (use.namespace === 'tools' || cmd === 'list') return { static: JSON.stringify(Object.fromEntries(sets)) };
      if (p.includes(' ') && arg !== '') return { static: JSON.stringify(sets.get(arg) ?? []) };
      return { static: JSON.stringify([...sets.keys()].sort()) };
    }
  }
  return undefined;
}

/**
 * The tool sets a task's `execute_config.tools` grants, each with the tools it stands for here (in
 * name order), as Contenox lists them for `{{tools}}` / `{{toolservice:…}}`: a set that grants no
 * tool of this task is left out.
 */
function grantedToolSets(t: ContenoxTask): Map<string, string[]> {
  const exec = (t.data.execute_config ?? {}) as Obj;
  const names = Array.isArray(exec.tools) ? exec.tools.filter((n): n is string => typeof n === 'string') : [];
  const sets = new Map<string, string[]>();
  const sorted = [...names].filter((n) => n !== '*' && !n.startsWith('!')).sort();
  for (const n of sorted) {
    const tools = (mapContenoxTool(n) ?? []).filter((x) => t.tools.includes(x)).sort();
    if (tools.length > 0) sets.set(n, tools);
  }
  if (names.includes('*')) for (const x of [...t.tools].sort()) if (![...sets.values()].some((v) => v.includes(x))) sets.set(x, [x]);
  return new Map([...sets.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function taskStep(t: ContenoxTask, doc: ContenoxDocument, handOvers: ReturnType<typeof toolHandOvers>, ctx: TextContext): IrStep {
  const exec = (t.data.execute_config ?? {}) as Obj;
  const input = inputOf(t, doc);
  const retry = retryOf(t, exec);
  const timeout = typeof t.data.timeout === 'string' ? durationSeconds(t.data.timeout) : undefined;
  const base = {
    id: t.id,
    identity: `contenox:${t.handler}:${t.id}`,
    secrets: secretsIn(t.data),
    location: t.location,
    ...(retry ? { retry } : {}),
    ...(timeout !== undefined ? { timeoutSeconds: Math.max(1, Math.ceil(timeout)) } : {}),
  };
  const reads = [...input.reads];
  switch (t.handler) {
    case 'chat_completion':
    case 'route': {
      const prompt =
        typeof t.data.prompt_template === 'string' && t.data.prompt_template !== ''
          ? textJsonata(t.data.prompt_template, t, ctx, reads, { input: input.jsonata }).jsonata
          : `$string(${input.jsonata})`;
      const labels =
        t.handler === 'route' ? [...new Set(t.branches.filter((b) => b.operator !== 'default' && b.when !== '').map((b) => b.when))] : [];
      const system = [
        typeof t.data.system_instruction === 'string' ? t.data.system_instruction : '',
        labels.length > 0 ? `Answer with exactly one of: ${labels.join(', ')}.` : '',
      ]
        .filter((x) => x !== '')
        .join('\n\n');
      const config: Record<string, unknown> = { handler: t.handler };
      const model = modelSpec(exec);
      if (model !== undefined) config.model = model;
      if (system !== '') {
        // Macros in the system_instruction (a date, a count) make it JSONata the step evaluates when it runs.
        const text = textJsonata(system, t, ctx, reads);
        config.system = text.dynamic ? `{% ${text.jsonata} %}` : aslText(system);
      }
      for (const k of ['temperature', 'max_tokens', 'think', 'models', 'providers', 'tools_policies'] as const)
        if (exec[k] !== undefined) config[k] = exec[k];
      const tools = t.handler === 'route' ? [] : t.tools;
      const step: IrStep = {
        ...base,
        kind: 'model',
        config,
        tools,
        input: { kind: 'jsonata', jsonata: prompt, reads },
        ...(tools.length > 0 ? { budget: DEFAULT_AGENT_BUDGET } : {}),
        ...(handOvers.chats.has(t.id) ? { handsOverToolCalls: true } : {}),
      };
      return step;
    }
    case 'tools': {
      const call = (t.data.tools ?? {}) as Obj;
      const tool = pickTool(t.tools, typeof call.tool_name === 'string' ? call.tool_name : '');
      const args = (call.args ?? {}) as Obj;
      const template = typeof t.data.output_template === 'string' && t.data.output_template !== '' ? t.data.output_template : undefined;
      return {
        ...base,
        kind: 'tool',
        config: { tool, ...(exec.tools_policies !== undefined ? { tools_policies: exec.tools_policies } : {}) },
        tools: [tool],
        input: { kind: 'template', value: args, reads: [] } satisfies IrExpr,
        ...(template !== undefined ? { outputExpr: outputTemplateJsonata(template) } : {}),
      };
    }
    case 'execute_tool_calls': {
      const chatId = handOvers.executors.get(t.id);
      if (chatId === undefined) break;
      // The calls run with the executor's own grants and policies, else its chat's (never fewer limits).
      const chat = doc.tasks.find((x) => x.id === chatId)!;
      const chatExec = (chat.data.execute_config ?? {}) as Obj;
      const policies = exec.tools_policies ?? chatExec.tools_policies;
      return {
        ...base,
        kind: 'tool',
        config: { handler: t.handler, ...(policies !== undefined ? { tools_policies: policies } : {}) },
        tools: t.tools.length > 0 ? t.tools : chat.tools,
        runsToolCallsOf: chatId,
      };
    }
  }
  switch (t.handler) {
    default:
      // noop / execute_tool_calls / raise_error: no call; the value is the input (raise_error's, its cause).
      return { ...base, kind: 'pure', config: { handler: t.handler }, tools: [], expr: { kind: 'jsonata', jsonata: input.jsonata, reads } };
  }
}

/**
 * A tools task's `output_template` as JSONata over `$out` (the tool's output), as Contenox renders
 * it (Go's text/template with the tool's JSON output as its data): `{{.}}` is the whole output,
 * `{{.a.b}}` a field of it, `<no value>` when the output has no such field; text, numbers and
 * booleans print as they are, other values as JSON. Trim markers (`{{- … -}}`) drop the spaces
 * beside them. Other actions (`{{if}}`, `{{range}}`, macros) stay as written.
 */
export function outputTemplateJsonata(template: string): string {
  const parts: string[] = [];
  let literal = '';
  let at = 0;
  for (const m of template.matchAll(/\{\{(-\s+)?\s*\.((?:[A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z_][A-Za-z0-9_]*)*)?\s*(\s+-)?\}\}/g)) {
    let before = template.slice(at, m.index);
    if (m[1] !== undefined) before = before.replace(/\s+$/, '');
    literal += before;
    at = m.index! + m[0].length;
    if (m[3] !== undefined) {
      const rest = template.slice(at);
      at += rest.length - rest.replace(/^\s+/, '').length;
    }
    if (literal !== '') parts.push(JSON.stringify(literal));
    literal = '';
    const path = m[2] === undefined ? '$out' : m[2].split('.').reduce((acc, key) => `$lookup(${acc}, ${JSON.stringify(key)})`, '$out');
    parts.push(`( $v := ${path}; $exists($v) ? ($type($v) = "string" ? $v : $string($v)) : ${JSON.stringify(NO_VALUE)} )`);
  }
  literal += template.slice(at);
  if (literal !== '' || parts.length === 0) parts.push(JSON.stringify(literal));
  return parts.join(' & ');
}

/** A `tools` task's tool: among the set's tools, the one its `tool_name` names (list vs read for local_fs). */
function pickTool(tools: readonly string[], toolName: string): string {
  if (tools.length <= 1) return tools[0] ?? 'shell';
  if (/list|dir|find/.test(toolName)) return tools.find((x) => x.includes('list')) ?? tools[0]!;
  return tools.find((x) => x.includes('read')) ?? tools[0]!;
}

const KNOWN_PROVIDERS = ['bedrock', 'openai', 'ollama', 'vllm', 'local'];

/** `provider:model` where the provider is one of ours; a bare model id otherwise (the project's provider). */
function modelSpec(exec: Obj): string | undefined {
  const model =
    typeof exec.model === 'string' && exec.model !== ''
      ? exec.model
      : Array.isArray(exec.models) && typeof exec.models[0] === 'string'
        ? exec.models[0]
        : undefined;
  const provider = typeof exec.provider === 'string' ? exec.provider : undefined;
  if (model === undefined) return provider !== undefined && KNOWN_PROVIDERS.includes(provider) ? `${provider}:default` : undefined;
  return provider !== undefined && KNOWN_PROVIDERS.includes(provider) ? `${provider}:${model}` : model;
}

/** retry_on_failure (extra tries) or execute_config.retry_policy (total attempts, 500 ms doubling by default). */
function retryOf(t: ContenoxTask, exec: Obj): IrRetry | undefined {
  const p = exec.retry_policy as Obj | undefined;
  if (p && typeof p === 'object') {
    // Contenox's zero value disables retry: a policy without max_attempts makes one attempt.
    const attempts = typeof p.max_attempts === 'number' ? p.max_attempts : 0;
    if (attempts <= 1) return retryOnFailure(t);
    const initial = typeof p.initial_backoff === 'string' ? (durationSeconds(p.initial_backoff) ?? 0.5) : 0.5;
    const max = typeof p.max_backoff === 'string' ? durationSeconds(p.max_backoff) : undefined;
    const jitter = typeof p.jitter === 'number' ? p.jitter > 0 : false;
    return {
      maxAttempts: attempts,
      intervalSeconds: Math.max(1, Math.round(initial)),
      backoffRate: 2,
      ...(max !== undefined ? { maxDelaySeconds: Math.max(1, Math.round(max)) } : {}),
      jitter,
    };
  }
  return retryOnFailure(t);
}

/** retry_on_failure: that many tries after the first. */
function retryOnFailure(t: ContenoxTask): IrRetry | undefined {
  const n = t.data.retry_on_failure;
  if (typeof n === 'number' && n > 0) return { maxAttempts: n + 1, intervalSeconds: 1, backoffRate: 2, jitter: false };
  return undefined;
}

/** A Go duration (`500ms`, `1s`, `2m30s`, `1h`) in seconds; undefined when it is not one. */
export function durationSeconds(text: string): number | undefined {
  const unit: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
  const t = text.trim();
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(t)) return undefined;
  let total = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) total += Number(m[1]) * unit[m[2]!]!;
  return total;
}

/**
 * The run input without the run metadata (a routed workflow's first `$prev`). An input with nothing
 * but the metadata is the empty text: `$sift` of it yields nothing, and an Assign that evaluates to
 * nothing fails the state (States.QueryEvaluationError), on AWS as here.
 */
export const CONTENOX_FIRST_INPUT = `( $i := $states.input; $t := $exists($i.input) ? $i.input : $type($i) = "object" ? $sift($i, function($v, $k) { $k != "${RUN_META_KEY}" }) : $i; $exists($t) ? $t : "" )`;

/**
 * A string for an ASL field: text with line breaks becomes a JSONata string literal (`{% "…\\n…" %}`),
 * which yields the same text at run time and keeps raw line breaks out of the definition, where
 * validators that follow the States Language schema refuse them.
 */
export function aslText(text: string): string {
  return /[\n\r]/.test(text) ? `{% ${JSON.stringify(text)} %}` : text;
}
