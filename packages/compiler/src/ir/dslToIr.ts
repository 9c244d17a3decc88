// Workflow DSL document → IR. Scopes (the top level and every `do` body) keep their dependency
// DAGs; composite steps carry their agents and bodies; `${ }` values stay as authored so the back end
// translates them per scope.
import { stepIdentity } from './stepIdentity.js';
import { mcpToolName } from '@stepforge/contract';
import type { DslDocument, DslScope, DslStep, DslTemplateField, DslValue } from '../dsl/DslDocument.js';
import { templateStepReferences } from '../expr/collectReferences.js';
import type { Template } from '../expr/ExpressionAst.js';
import { parseDurationSeconds } from '../source/durations.js';
import type { IrAgentRef, IrComposite, IrDeployment, IrDocument, IrExpr, IrRetry, IrStep, IrWorkflow } from './Ir.js';
import { DEFAULT_AGENT_BUDGET, inputDefaults } from './chainToIr.js';

/** Lowers a loaded DSL document into the IR. */
export function dslToIr(doc: DslDocument, options: { file?: string; source?: string } = {}): IrDocument {
  // `new Array()`, not `[]`, for the list every template is pushed onto: see step.
  const ctx: Context = { doc, templates: new Array<Template>(), identities: new Map() };
  const top = scope(ctx, doc.workflow);
  return {
    name: doc.name,
    displayName: doc.displayName,
    nameLocation: doc.nameLocation,
    format: 'dsl',
    // A literal, not a spread of `top`: a clone's shape does not outlive a full GC between compiles,
    // and every pass over the workflow was deoptimised when it changed.
    workflow: { steps: top.steps, edges: top.edges, resultStep: top.resultStep, output: doc.output ? value(ctx, doc.output) : undefined },
    inputDefaults: inputDefaults(doc.input),
    inputSchema: doc.input,
    file: options.file ?? doc.file,
    source: options.source,
    templates: ctx.templates,
    deployment: deployment(doc),
  };
}

/** The document's deployment settings: `express:`, `triggers:`, the mapping-form `mcp_servers:` and the top-level secret ids. */
function deployment(doc: DslDocument): IrDeployment {
  const mcpServers = Object.fromEntries(
    Object.values(doc.mcpServers)
      .filter((r) => r.uri === undefined && Object.keys(r.config).length > 0)
      .map((r) => [r.name, r.config]),
  );
  return {
    ...(doc.express !== undefined ? { express: doc.express } : {}),
    ...(doc.triggers !== undefined ? { triggers: doc.triggers } : {}),
    mcpServers,
    secrets: [...new Set(Object.values(doc.secrets).map((s) => s.id))].sort(),
  };
}

/** The document being lowered, and the templates the loader parsed (handed on to lowering). */
interface Context {
  readonly doc: DslDocument;
  readonly templates: Template[];
  /** Step identities by canonical text, for this conversion (see stepIdentity). */
  readonly identities: Map<string, string>;
}

function scope(ctx: Context, s: DslScope): IrWorkflow {
  // A loop, not map: an arrow made per call would hold step's optimised code, and lose it at the
  // next mark-compact (see scheduleDag's DagScheduler).
  const steps = new Array<IrStep>();
  for (const st of s.steps) steps.push(step(ctx, st));
  return { steps, edges: s.edges, resultStep: s.resultStep };
}

function value(ctx: Context, v: DslValue): IrExpr {
  // Assigned onto `{}`: see step.
  const expr = {} as { kind: 'template'; value: unknown; reads: readonly string[] };
  expr.kind = 'template';
  expr.value = authored(ctx, v);
  expr.reads = v.reads;
  return expr;
}

/** The value as authored; its parsed templates are handed on to lowering. */
function authored(ctx: Context, v: DslValue): unknown {
  for (const t of v.templates) ctx.templates.push(t.template);
  return v.value;
}

function field(ctx: Context, f: DslTemplateField): IrExpr {
  // A bare expression was parsed without its `${ }`: that parse is not the one of `text`.
  if (f.template.text === f.text) ctx.templates.push(f.template);
  return { kind: 'template', value: f.text, reads: templateStepReferences(f.template) };
}

/** The tool names an agent's configuration declares (`tools: [...]`), once each, in order. */
function agentTools(config: Readonly<Record<string, unknown>> | undefined): string[] {
  const tools = config?.tools;
  return Array.isArray(tools) ? [...new Set(tools.filter((t): t is string => typeof t === 'string'))] : new Array<string>();
}

/**
 * The document's `mcp_servers` entries that an agent's `mcp.<server>.<tool>` grants name, by server
 * (those with a configuration: `{url}` or `{command, args}`), so the runtime reaches them with no
 * setting of its own, as an mcp_tool step does; undefined when there are none.
 */
function grantedMcpServers(doc: DslDocument, tools: readonly string[]): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const t of tools) {
    const server = mcpToolName(t)?.server;
    const declared =
      server !== undefined && Object.prototype.hasOwnProperty.call(doc.mcpServers, server) ? doc.mcpServers[server] : undefined;
    if (declared && Object.keys(declared.config).length > 0) out[server!] = declared.config;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function agentRef(ctx: Context, agent: string, role: string, focus?: string): IrAgentRef {
  const config = ctx.doc.agents[agent]?.config ?? {};
  return {
    agent,
    role,
    identity: stepIdentity('agent', { agent, role, config, ...(focus !== undefined ? { focus } : {}) }, [], ctx.identities),
    ...(Object.keys(config).length > 0 ? { agentConfig: config } : {}),
    ...(focus !== undefined ? { focus } : {}),
  };
}

function step(ctx: Context, s: DslStep): IrStep {
  const input =
    s.inputTemplate && s.input
      ? {
          kind: 'template' as const,
          value: { input: authored(ctx, s.input), prompt: authored(ctx, s.inputTemplate) },
          reads: [...new Set([...s.input.reads, ...s.inputTemplate.reads])],
        }
      : s.inputTemplate
        ? value(ctx, s.inputTemplate)
        : s.input
          ? value(ctx, s.input)
          : undefined;
  const { config, composite } = kindFields(ctx, s);
  // An agent step is granted the tools its agent declares: it runs as an agent loop (reason, the
  // tool calls it asks for, again), as a chain task granted tools with `@` does.
  const tools = s.kind === 'agent' ? agentTools(ctx.doc.agents[s.agent]?.config) : new Array<string>();
  const secrets = s.secrets.length === 0 ? new Array<string>() : s.secrets.map((x) => x.id);
  const retry = dslRetry((s as { retry?: unknown }).retry);
  const when = s.when ? field(ctx, s.when) : undefined;
  const identity = stepIdentity(s.kind, config, tools, ctx.identities);
  // Assigned key by key onto `{}`, in one order (`budget` after `tools`, `composite` last): a
  // conditional spread in the middle of a literal built every step through the slow generic copy,
  // and a literal with fields is an allocation site V8 pretenures when its objects outlive a
  // scavenge, as the IR's do, which left every compile's steps in the old space until a
  // mark-compact, on fresh pages each time (see docs/performance.md).
  const out = {} as { -readonly [K in keyof IrStep]: IrStep[K] };
  out.id = s.name;
  out.secrets = secrets;
  out.tools = tools;
  if (tools.length > 0) out.budget = DEFAULT_AGENT_BUDGET;
  out.retry = retry;
  out.input = input;
  out.when = when;
  out.location = s.location;
  out.output = s.output;
  out.kind = s.kind;
  out.config = config;
  out.identity = identity;
  if (composite !== undefined) out.composite = composite;
  return out;
}

/** The step's handler configuration (what its identity hashes) and, for composite kinds, its structure. */
function kindFields(ctx: Context, s: DslStep): { config: Record<string, unknown>; composite?: IrComposite } {
  const doc = ctx.doc;
  switch (s.kind) {
    case 'agent': {
      const a = doc.agents[s.agent];
      const servers = grantedMcpServers(doc, agentTools(a?.config));
      // Assigned in key order rather than spread from conditional literals (see step).
      const config: Record<string, unknown> = {};
      config.agent = s.agent;
      if (a?.uri) config.uri = a.uri;
      if (a && Object.keys(a.config).length > 0) config.agentConfig = a.config;
      if (servers !== undefined) config.mcpServers = servers;
      return { config };
    }
    case 'function': {
      // Binding name → secret id: a Python function called GraphN's way gets each binding as the
      // keyword argument of that name (`secrets: {API_KEY: $secret:news-key}` → API_KEY=…).
      if (s.secrets.length > 0)
        return { config: { function: s.function, secretNames: Object.fromEntries(s.secrets.map((x) => [x.name, x.id])) } };
      // Assigned onto `{}` (see step): every function step's configuration lives as long as the IR.
      const config: Record<string, unknown> = {};
      config.function = s.function;
      return { config };
    }
    case 'mcp_tool': {
      const srv = doc.mcpServers[s.server];
      return {
        config: {
          server: s.server,
          tool: s.tool,
          ...(srv?.uri ? { uri: srv.uri } : {}),
          ...(srv && Object.keys(srv.config).length > 0 ? { serverConfig: srv.config } : {}),
        },
      };
    }
    case 'connector':
      return { config: { connector: s.connector, action: s.action } };
    case 'conditional': {
      const condition = field(ctx, s.condition);
      if (!s.branches) return { config: { condition: s.condition.text }, composite: { condition } };
      const at = (b: DslStep | undefined) => (b ? s.branches!.steps.indexOf(b) : -1);
      return {
        config: { condition: s.condition.text },
        composite: {
          condition,
          body: scope(ctx, s.branches),
          ...(s.then ? { thenStep: at(s.then) } : {}),
          ...(s.else ? { elseStep: at(s.else) } : {}),
        },
      };
    }
    case 'for_each': {
      const items: IrExpr = 'literal' in s.items ? { kind: 'template', value: s.items.literal, reads: [] } : field(ctx, s.items);
      return {
        config: { as: s.as, maxIterations: s.maxIterations, parallel: s.parallel },
        composite: { items, as: s.as, maxIterations: s.maxIterations, parallel: s.parallel, body: scope(ctx, s.do) },
      };
    }
    case 'while':
      return {
        config: { condition: s.condition.text, maxIterations: s.maxIterations },
        composite: {
          condition: field(ctx, s.condition),
          maxIterations: s.maxIterations,
          body: scope(ctx, s.do),
          ...(s.carried !== undefined ? { carried: s.carried } : {}),
        },
      };
    case 'parallel_analyzer':
      return {
        config: {
          analysts: s.analysts.map((a) =>
            a.focus !== undefined ? { agent: a.agent, role: a.role, focus: a.focus } : { agent: a.agent, role: a.role },
          ),
          aggregator: s.aggregator,
        },
        composite: {
          analysts: s.analysts.map((a) => agentRef(ctx, a.agent, a.role, a.focus)),
          aggregator: agentRef(ctx, s.aggregator, 'aggregator'),
        },
      };
    case 'handoff_router':
      return {
        config: { entry_agent: s.entryAgent, specialists: s.specialists.map((a) => ({ agent: a.agent, role: a.role })) },
        composite: { entry: agentRef(ctx, s.entryAgent, 'entry'), specialists: s.specialists.map((a) => agentRef(ctx, a.agent, a.role)) },
      };
    case 'judge_loop':
      return {
        config: { generator: s.generator, evaluator: s.evaluator, pass_condition: s.passCondition.text, maxIterations: s.maxIterations },
        composite: {
          generator: agentRef(ctx, s.generator, 'generator'),
          evaluator: agentRef(ctx, s.evaluator, 'evaluator'),
          condition: s.passByDefault ? EVALUATOR_SAYS_PASS : field(ctx, s.passCondition),
          maxIterations: s.maxIterations,
        },
      };
  }
}

/**
 * The default pass condition: the evaluator's answer, trimmed, starts with the word PASS
 * (case-sensitive), so "PASS.", "PASS\n" and "PASS: clear and short" pass and "PASSABLE" does not.
 * Leading `[offline:<mode>] ` labels, which the offline provider puts on every answer, are ignored: all
 * of them, as an echoing evaluator's answer holds its own label and the echoed candidate's, so offline
 * the judge passes when the candidate, under its label, starts with PASS (see docs/dsl.md).
 * Written in JSONata: the DSL's expressions have no string functions.
 */
const EVALUATOR_SAYS_PASS: IrExpr = {
  kind: 'jsonata',
  jsonata:
    '( $e := $input.evaluation; $t := $type($e) = "string" ? $replace($trim($e), /^(\\[offline:\\w+\\] *)+/, "") : ""; $contains($t, /^PASS\\b/) )',
  reads: [],
};

/** `retry: {max_attempts, initial_backoff, max_backoff, jitter}` → IrRetry (absent or malformed → none). */
function dslRetry(r: unknown): IrRetry | undefined {
  if (r === null || typeof r !== 'object') return undefined;
  const o = r as Record<string, unknown>;
  const attempts = typeof o.max_attempts === 'number' ? o.max_attempts : 3;
  return {
    maxAttempts: attempts,
    intervalSeconds: parseDurationSeconds(o.initial_backoff) ?? 1,
    backoffRate: typeof o.backoff_rate === 'number' ? o.backoff_rate : 2,
    maxDelaySeconds: parseDurationSeconds(o.max_backoff),
    jitter: o.jitter === undefined ? true : o.jitter === true || o.jitter === 'FULL' || o.jitter === 'full',
  };
}
