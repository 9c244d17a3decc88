// Kortecx's canonical lowering of a chain: the (steps, edges) its SDKs and CLI submit, so a chain
// document can be compared with what Kortecx itself would build from the same expression and tasks.
import { StepforgeError } from '@stepforge/contract';
import type { ChainDocument } from './ChainDocument.js';
import { KORTECX_GRANT_VERSION, KORTECX_TOOL_ARGS_KEY } from './kortecxTask.js';

/** One lowered step, keys in Kortecx's order; `params` values are strings. */
export interface KortecxStep {
  readonly kind: 'pure' | 'model' | 'tool';
  readonly model_id: string;
  readonly prompt: string;
  readonly body_signature_id: string | null;
  readonly tool_contract: Readonly<Record<string, string>>;
  readonly params: Readonly<Record<string, string>>;
}

/** The lowering: steps in node order, data edges sorted by (parent, child), and the run's bundles when written. */
export interface KortecxLowering {
  readonly steps: readonly KortecxStep[];
  readonly edges: readonly { readonly parent: number; readonly child: number; readonly edge: 'data' }[];
  readonly context_bundles?: readonly string[];
}

/**
 * Lowers a loaded chain document as Kortecx does: each node's task verbatim with its defaults filled
 * (`model_id`/`prompt` "", `body_signature_id` null, `tool_contract`/`params` {}), `@tool` grants
 * added to a model step's `tool_contract` at version "1", a tool step's arguments as one canonical
 * JSON string (sorted keys, compact) under `params["kx.tool.args"]`, and an agentic model step's
 * `max_turns` / `max_tool_calls` as decimal strings in `params`. Our own spelling lowers to the same
 * form (`model` → `model_id`, `tool` → `tool_contract`). A connector step has no Kortecx form: a
 * located `invalid_task` error.
 */
export function kortecxLowering(doc: ChainDocument): { lowering?: KortecxLowering; errors: StepforgeError[] } {
  const errors: StepforgeError[] = [];
  const steps: KortecxStep[] = [];
  for (const s of doc.steps) {
    const raw = (doc.tasks[s.handle] ?? {}) as Record<string, unknown>;
    const kind = raw.kind;
    if (kind !== 'pure' && kind !== 'model' && kind !== 'tool') {
      errors.push(
        new StepforgeError(
          'invalid_task',
          `tasks.${s.handle}: a ${String(kind)} task has no Kortecx form (Kortecx runs pure, model and tool steps)`,
          { location: s.taskLocation },
        ),
      );
      continue;
    }
    const contract: Record<string, string> = { ...((raw.tool_contract as Record<string, string> | undefined) ?? {}) };
    if (kind === 'tool' && typeof raw.tool === 'string' && !(raw.tool in contract)) contract[raw.tool] = KORTECX_GRANT_VERSION;
    if (kind === 'model') for (const t of s.tools) if (!(t in contract)) contract[t] = KORTECX_GRANT_VERSION;
    const params: Record<string, string> = { ...((raw.params as Record<string, string> | undefined) ?? {}) };
    if (kind === 'tool' && !(KORTECX_TOOL_ARGS_KEY in params)) params[KORTECX_TOOL_ARGS_KEY] = kortecxArgsJson(raw.args ?? {});
    if (kind === 'model' && Object.keys(contract).length > 0) {
      for (const key of ['max_turns', 'max_tool_calls'] as const) {
        if (typeof raw[key] === 'number' && !(key in params)) params[key] = String(raw[key]);
      }
    }
    const model = typeof raw.model_id === 'string' ? raw.model_id : typeof raw.model === 'string' ? raw.model : '';
    steps.push({
      kind,
      model_id: kind === 'model' ? model : '',
      prompt: kind === 'model' && typeof raw.prompt === 'string' ? raw.prompt : '',
      body_signature_id: typeof raw.body_signature_id === 'string' ? raw.body_signature_id : null,
      tool_contract: contract,
      params,
    });
  }
  if (errors.length > 0) return { errors };
  const edges = doc.edges.map(([parent, child]) => ({ parent, child, edge: 'data' as const }));
  return { lowering: { steps, edges, ...(doc.contextBundles !== undefined ? { context_bundles: doc.contextBundles } : {}) }, errors };
}

/** JSON with every object's keys sorted and no whitespace: the byte form Kortecx's three SDKs agree on. */
export function kortecxArgsJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) out[k] = sortKeys((v as Record<string, unknown>)[k]);
  return out;
}
