// Chain document → IR. Tasks map to steps one to one; a step's inputs are its parents' outputs
// (the runtime shows them to the model as labelled context when the prompt does not place them).
import type { ChainDocument, ChainStep } from '../chain/ChainDocument.js';
import type { ChainTask, RetryPolicy } from '../chain/ChainTask.js';
import { PASS_THROUGH_EXPR } from '../chain/kortecxTask.js';
import { templateStepReferences } from '../expr/collectReferences.js';
import type { Template } from '../expr/ExpressionAst.js';
import { hasExpression, parseTemplate } from '../expr/parseTemplate.js';
import type { InputSchema } from '../input/InputSchema.js';
import type { IrDocument, IrExpr, IrRetry, IrStep } from './Ir.js';

/** Lowers a loaded chain document into the IR. */
/** An agent loop's bounds when its document sets none (a chain task granted tools, a DSL agent with tools). */
export const DEFAULT_AGENT_BUDGET = { maxTurns: 16, maxToolCalls: 20 } as const;

export function chainToIr(
  doc: ChainDocument,
  options: { name: string; file?: string; source?: string; inputSchema?: InputSchema },
): IrDocument {
  const parents = doc.steps.map(() => [] as string[]);
  for (const [a, b] of doc.edges) parents[b]!.push(doc.steps[a]!.handle);
  const templates: Template[] = [];
  const steps = doc.steps.map((s) => chainStep(s, parents[s.index]!, templates));
  const hasChild = new Set(doc.edges.map(([a]) => a));
  const sinks = doc.steps.filter((s) => !hasChild.has(s.index));
  // One sink: its output is the result. Several: an object of their outputs by handle.
  const output: IrExpr | undefined =
    sinks.length > 1
      ? {
          kind: 'template',
          value: Object.fromEntries(sinks.map((s) => [s.handle, `\${steps.${s.handle}.output}`])),
          reads: sinks.map((s) => s.handle),
        }
      : undefined;
  return {
    name: options.name,
    format: 'chain',
    workflow: { steps, edges: doc.edges, output, resultStep: sinks.length === 1 ? sinks[0]!.index : undefined },
    inputDefaults: inputDefaults(options.inputSchema),
    ...(options.inputSchema !== undefined ? { inputSchema: options.inputSchema } : {}),
    file: options.file,
    source: options.source,
    templates,
    ...(doc.express !== undefined || doc.triggers !== undefined
      ? {
          deployment: {
            ...(doc.express !== undefined ? { express: doc.express } : {}),
            ...(doc.triggers !== undefined ? { triggers: doc.triggers } : {}),
          },
        }
      : {}),
  };
}

function chainStep(s: ChainStep, parents: readonly string[], templates: Template[]): IrStep {
  const task = s.task as ChainTask & { retry?: RetryPolicy; timeout_seconds?: number };
  const config = withoutKindAndRetry(task);
  // Built as one object and completed per kind: spreading a shared base and destructuring the task
  // with a rest pattern per step were most of this pass, and left objects every later pass reads slowly.
  const step: { -readonly [K in keyof IrStep]: IrStep[K] } = {
    id: s.handle,
    identity: s.identity,
    config,
    tools: s.tools,
    secrets: secretsIn(config),
    retry: task.retry === undefined ? undefined : chainRetry(task.retry),
    timeoutSeconds: task.timeout_seconds,
    location: s.location,
    kind: task.kind,
  };
  switch (task.kind) {
    case 'pure':
      step.expr = { kind: 'jsonata', jsonata: task.expr ?? PASS_THROUGH_EXPR, reads: parents };
      break;
    case 'model':
      step.input = template(task.prompt, parents, templates);
      step.budget = s.tools.length > 0 ? (s.budget ?? DEFAULT_AGENT_BUDGET) : undefined;
      // A consensus judge says so (`select: verbatim`); the loader has checked it has candidates.
      step.chooseFrom = task.select === 'verbatim' ? parents : undefined;
      break;
    case 'tool':
      step.input = template(task.args ?? {}, parents, templates);
      break;
    case 'connector':
      step.input = template(task.input ?? {}, parents, templates);
      break;
  }
  return step;
}

/** The task's fields as the step's configuration: all but `kind` and `retry`, in their order. */
function withoutKindAndRetry(task: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const k of Object.keys(task)) if (k !== 'kind' && k !== 'retry') config[k] = task[k];
  return config;
}

/**
 * A template value whose reads are the step's parents (plus any `steps.X` it names); the templates
 * it parses are added to `parsed` (handed on to lowering, see IrDocument.templates).
 */
export function template(value: unknown, parents: readonly string[], parsed: Template[] = []): IrExpr {
  const reads = new Set(parents);
  const visit = (v: unknown): void => {
    if (typeof v === 'string' && hasExpression(v)) {
      try {
        const t = parseTemplate(v);
        parsed.push(t);
        for (const r of templateStepReferences(t)) reads.add(r);
      } catch {
        // The front-end already reported malformed templates; lowering reports them again in context.
      }
    } else if (Array.isArray(v)) v.forEach(visit);
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(visit);
  };
  visit(value);
  return { kind: 'template', value, reads: [...reads] };
}

function chainRetry(r: RetryPolicy): IrRetry {
  return {
    maxAttempts: r.max_attempts ?? 3,
    intervalSeconds: r.interval_seconds ?? 1,
    backoffRate: r.backoff_rate ?? 2,
    maxDelaySeconds: r.max_delay_seconds,
    jitter: (r.jitter ?? 'FULL') === 'FULL',
    errors: r.errors,
  };
}

/** A `$secret:<id>` binding (matchAll works on a copy, so one RegExp serves every string). */
const SECRET_REF = /\$secret:([A-Za-z0-9_./-]+)/g;

/** `$secret:<id>` bindings named anywhere in a task's configuration (ids only). */
export function secretsIn(value: unknown): string[] {
  const out = new Set<string>();
  const visit = (v: unknown): void => {
    // Most strings name no secret: one scan says so, without a RegExp and an iterator per string.
    if (typeof v === 'string') {
      if (v.includes('$secret:')) for (const m of v.matchAll(SECRET_REF)) out.add(m[1]!);
    } else if (Array.isArray(v)) v.forEach(visit);
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(visit);
  };
  visit(value);
  return [...out];
}

/** Defaults declared in an `input:` schema. */
export function inputDefaults(schema: InputSchema | undefined): Record<string, unknown> | undefined {
  if (!schema) return undefined;
  const out: Record<string, unknown> = {};
  for (const f of schema.fields) if (f.hasDefault) out[f.name] = f.default;
  return Object.keys(out).length > 0 ? out : undefined;
}
