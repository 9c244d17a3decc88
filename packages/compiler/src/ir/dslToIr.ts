// Workflow DSL document → IR. Scopes (the top level and every `do` body) keep their dependency
// DAGs; composite steps carry their agents and bodies; `${ }` values stay as authored so the back end
// translates them per scope.
import { stepIdentity } from '../chain/stepIdentity.js';
import type { DslDocument, DslScope, DslStep, DslTemplateField, DslValue } from '../dsl/DslDocument.js';
import { templateStepReferences } from '../expr/collectReferences.js';
import { parseDurationSeconds } from '../lower/renderRetry.js';
import type { IrAgentRef, IrComposite, IrDocument, IrExpr, IrRetry, IrStep, IrWorkflow } from './Ir.js';
import { inputDefaults } from './chainToIr.js';

/** Lowers a loaded DSL document into the IR. */
export function dslToIr(doc: DslDocument, options: { file?: string; source?: string } = {}): IrDocument {
  return {
    name: doc.name,
    format: 'dsl',
    workflow: { ...scope(doc, doc.workflow), output: doc.output ? value(doc.output) : undefined },
    inputDefaults: inputDefaults(doc.input),
    file: options.file ?? doc.file,
    source: options.source,
  };
}

function scope(doc: DslDocument, s: DslScope): IrWorkflow {
  return { steps: s.steps.map((st) => step(doc, st)), edges: s.edges, resultStep: s.resultStep };
}

function value(v: DslValue): IrExpr {
  return { kind: 'template', value: v.value, reads: v.reads };
}

function field(f: DslTemplateField): IrExpr {
  return { kind: 'template', value: f.text, reads: templateStepReferences(f.template) };
}

function agentRef(doc: DslDocument, agent: string, role: string): IrAgentRef {
  return { agent, role, identity: stepIdentity('agent', { agent, role, config: doc.agents[agent]?.config ?? {} }, []) };
}

function step(doc: DslDocument, s: DslStep): IrStep {
  const input = s.inputTemplate && s.input
    ? { kind: 'template' as const, value: { input: s.input.value, prompt: s.inputTemplate.value }, reads: [...new Set([...s.input.reads, ...s.inputTemplate.reads])] }
    : s.inputTemplate ? value(s.inputTemplate) : s.input ? value(s.input) : undefined;
  const { config, composite } = kindFields(doc, s);
  // One object literal (spreading a shared base and an `extra` into each step was most of this pass);
  // `composite` stays the last key, as before.
  const out: IrStep = {
    id: s.name,
    secrets: s.secrets.map((x) => x.id),
    tools: [],
    retry: dslRetry((s as { retry?: unknown }).retry),
    input,
    when: s.when ? field(s.when) : undefined,
    location: s.location,
    kind: s.kind,
    config,
    identity: stepIdentity(s.kind, config, []),
  };
  return composite === undefined ? out : { ...out, composite };
}

/** The step's handler configuration (what its identity hashes) and, for composite kinds, its structure. */
function kindFields(doc: DslDocument, s: DslStep): { config: Record<string, unknown>; composite?: IrComposite } {
  switch (s.kind) {
    case 'agent': {
      const a = doc.agents[s.agent];
      return { config: { agent: s.agent, ...(a?.uri ? { uri: a.uri } : {}), ...(a && Object.keys(a.config).length > 0 ? { agentConfig: a.config } : {}) } };
    }
    case 'function':
      return { config: { function: s.function } };
    case 'mcp_tool': {
      const srv = doc.mcpServers[s.server];
      return { config: { server: s.server, tool: s.tool, ...(srv?.uri ? { uri: srv.uri } : {}), ...(srv && Object.keys(srv.config).length > 0 ? { serverConfig: srv.config } : {}) } };
    }
    case 'connector':
      return { config: { connector: s.connector, action: s.action } };
    case 'conditional':
      return { config: { condition: s.condition.text }, composite: { condition: field(s.condition) } };
    case 'for_each': {
      const items: IrExpr = 'literal' in s.items ? { kind: 'template', value: s.items.literal, reads: [] } : field(s.items);
      return {
        config: { as: s.as, maxIterations: s.maxIterations, parallel: s.parallel },
        composite: { items, as: s.as, maxIterations: s.maxIterations, parallel: s.parallel, body: scope(doc, s.do) },
      };
    }
    case 'while':
      return {
        config: { condition: s.condition.text, maxIterations: s.maxIterations },
        composite: { condition: field(s.condition), maxIterations: s.maxIterations, body: scope(doc, s.do) },
      };
    case 'parallel_analyzer':
      return {
        config: { analysts: s.analysts.map((a) => ({ agent: a.agent, role: a.role })), aggregator: s.aggregator },
        composite: { analysts: s.analysts.map((a) => agentRef(doc, a.agent, a.role)), aggregator: agentRef(doc, s.aggregator, 'aggregator') },
      };
    case 'handoff_router':
      return {
        config: { entry_agent: s.entryAgent, specialists: s.specialists.map((a) => ({ agent: a.agent, role: a.role })) },
        composite: { entry: agentRef(doc, s.entryAgent, 'entry'), specialists: s.specialists.map((a) => agentRef(doc, a.agent, a.role)) },
      };
    case 'judge_loop':
      return {
        config: { generator: s.generator, evaluator: s.evaluator, pass_condition: s.passCondition.text, maxIterations: s.maxIterations },
        composite: {
          generator: agentRef(doc, s.generator, 'generator'),
          evaluator: agentRef(doc, s.evaluator, 'evaluator'),
          condition: field(s.passCondition),
          maxIterations: s.maxIterations,
        },
      };
  }
}

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
