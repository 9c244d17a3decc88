// Kortecx writes the same three task kinds (pure, model, tool) with its own field names. The loader
// accepts both spellings; normalizeKortecxTask turns a Kortecx-style task into ours so everything after
// loading (identity, IR, lowering) sees one form, and says where a Kortecx field does nothing here.
import type { ChainPath } from './ChainLocator.js';
import type { ChainTask } from './ChainTask.js';

/** The `params` keys Kortecx itself reads: an agentic model step's budget and a tool step's arguments. */
export const KORTECX_TOOL_ARGS_KEY = 'kx.tool.args';
const BUDGET_KEYS = ['max_turns', 'max_tool_calls'] as const;

/** The version a `@tool` grant stands for in Kortecx's lowering. */
export const KORTECX_GRANT_VERSION = '1';

/**
 * Output of a pure step without `expr`: its input passed through — the workflow input for an entry
 * step, the parent's output for one parent, the parents' outputs by handle for several.
 */
export const PASS_THROUGH_EXPR = '($k := $keys($); $count($k) = 0 ? $input : $count($k) = 1 ? $lookup($, $k[0]) : $)';

/**
 * The kind of a task written without `kind:`, inferred from its fields as Kortecx infers it: a
 * `model_id` or `prompt` makes a model step, a `tool_contract` without those a tool step, anything
 * else a pure step. Our own spellings count the same way (`model` as `model_id`, `tool` as
 * `tool_contract`), and a `connector` makes a connector step. Fields that do not fit the kind
 * inferred are then refused as unknown fields of that kind, as with a `kind:` written out.
 */
export function inferTaskKind(task: Readonly<Record<string, unknown>>): 'model' | 'tool' | 'connector' | 'pure' {
  const has = (k: string) => Object.prototype.hasOwnProperty.call(task, k);
  if (has('model_id') || has('prompt') || has('model')) return 'model';
  if (has('tool_contract') || has('tool')) return 'tool';
  if (has('connector')) return 'connector';
  return 'pure';
}

/**
 * The task map with each mapping that has no `kind` given the kind inferTaskKind infers, written
 * first as the author would have written it; other entries (those with a `kind`, and values that are
 * not mappings, which the task checks refuse) are kept as they are. The map is copied only when a
 * kind is filled in.
 */
export function withInferredKinds(tasks: Record<string, unknown>): Record<string, unknown> {
  const lacksKind = (v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) && !Object.prototype.hasOwnProperty.call(v, 'kind');
  if (!Object.values(tasks).some(lacksKind)) return tasks;
  // fromEntries defines each handle as an own property, `__proto__` included.
  return Object.fromEntries(
    Object.entries(tasks).map(([h, v]) =>
      lacksKind(v) ? [h, { kind: inferTaskKind(v as Record<string, unknown>), ...(v as Record<string, unknown>) }] : [h, v],
    ),
  );
}

/** A finding about a task field, at a data path under the document root. */
export interface KortecxFinding {
  readonly code: string;
  readonly message: string;
  readonly path: ChainPath;
}

/** The normalised task plus what the loader should report. */
export interface NormalizedTask {
  readonly task?: ChainTask;
  readonly errors: KortecxFinding[];
  readonly warnings: KortecxFinding[];
  /** Where `max_turns` / `max_tool_calls` were written (for the tier's messages). */
  readonly budgetPaths: Partial<Record<(typeof BUDGET_KEYS)[number], ChainPath>>;
}

/**
 * Maps Kortecx's fields of a validated task onto ours: `model_id` → `model`, `tool_contract` → the
 * granted tools (model) or `tool` (tool), `params.max_turns`/`max_tool_calls` → the budget,
 * `params["kx.tool.args"]` → `args`, a bare pure step → a pass-through `expr`. Fields that change
 * nothing here (tool versions, other params, `body_signature_id`) are `no_effect` warnings.
 */
export function normalizeKortecxTask(handle: string, task: ChainTask): NormalizedTask {
  const base: ChainPath = ['tasks', handle];
  const errors: KortecxFinding[] = [];
  const warnings: KortecxFinding[] = [];
  const budgetPaths: NormalizedTask['budgetPaths'] = {};
  const out: Record<string, unknown> = {};
  const t = task as ChainTask & {
    tool_contract?: Record<string, string>;
    params?: Record<string, string>;
    body_signature_id?: string | null;
    model_id?: string;
  };
  for (const [k, v] of Object.entries(t)) if (!['model_id', 'tool_contract', 'params', 'body_signature_id'].includes(k)) out[k] = v;
  const params = t.params ?? {};
  const handled = new Set<string>();

  if (typeof t.body_signature_id === 'string') {
    warnings.push({
      code: 'no_effect',
      message: `tasks.${handle}.body_signature_id: has no effect here (Kortecx reads it only for exec steps, which Stepforge does not run); remove it`,
      path: [...base, 'body_signature_id'],
    });
  }

  if (t.kind === 'model') {
    for (const key of BUDGET_KEYS) budgetPaths[key] = [...base, key];
    if (t.model_id !== undefined && t.model !== undefined) {
      errors.push({
        code: 'invalid_task',
        message: `tasks.${handle}: give either 'model' or 'model_id' (Kortecx's name for it), not both`,
        path: [...base, 'model_id'],
      });
    } else if (t.model_id !== undefined && t.model_id !== '') {
      // Not checked against our "<provider>:<id>" form: a Kortecx id ("kx-serve:qwen3-4b") goes to the project's provider as written.
      out.model = t.model_id;
    }
    for (const key of BUDGET_KEYS) {
      const raw = params[key];
      if (raw === undefined) continue;
      handled.add(key);
      const path = [...base, 'params', key];
      if (!/^(0|[1-9][0-9]{0,8})$/.test(raw)) {
        errors.push({
          code: 'invalid_task',
          message: `tasks.${handle}.params.${key}: expected a whole number written as a string (e.g. "4"), got ${JSON.stringify(raw)}`,
          path,
        });
        continue;
      }
      const n = Number(raw);
      const own = (t as { max_turns?: number; max_tool_calls?: number })[key];
      if (own !== undefined && own !== n) {
        errors.push({
          code: 'invalid_task',
          message: `tasks.${handle}.params.${key}: ${raw} disagrees with ${key}: ${own}; keep one of them`,
          path,
        });
        continue;
      }
      if (key === 'max_turns' && n < 1) {
        errors.push({ code: 'invalid_task', message: `tasks.${handle}.params.max_turns: expected at least 1, got ${raw}`, path });
        continue;
      }
      out[key] = n;
      budgetPaths[key] = path;
    }
    versionWarnings(handle, t.tool_contract, warnings);
  } else if (t.kind === 'tool') {
    const contract = Object.keys(t.tool_contract ?? {});
    if (contract.length > 1) {
      errors.push({
        code: 'invalid_task',
        message: `tasks.${handle}.tool_contract: a tool task fires one tool, got ${contract.length} (${contract.join(', ')}); split it into one task per tool`,
        path: [...base, 'tool_contract'],
      });
    } else if (contract.length === 1 && t.tool !== undefined && t.tool !== contract[0]) {
      errors.push({
        code: 'invalid_task',
        message: `tasks.${handle}: 'tool' (${t.tool}) and 'tool_contract' (${contract[0]}) name different tools; keep one`,
        path: [...base, 'tool_contract'],
      });
    } else if (contract.length === 1) {
      out.tool = contract[0];
    } else if (t.tool === undefined) {
      errors.push({
        code: 'invalid_task',
        message: `tasks.${handle}: a tool task names its tool: 'tool: NAME' or Kortecx's 'tool_contract: {NAME: "1"}'`,
        path: base,
      });
    }
    versionWarnings(handle, t.tool_contract, warnings);
    const folded = params[KORTECX_TOOL_ARGS_KEY];
    if (folded !== undefined) {
      handled.add(KORTECX_TOOL_ARGS_KEY);
      const path = [...base, 'params', KORTECX_TOOL_ARGS_KEY];
      let parsed: unknown;
      try {
        parsed = JSON.parse(folded);
      } catch {
        parsed = undefined;
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        errors.push({
          code: 'invalid_task',
          message: `tasks.${handle}.params.${KORTECX_TOOL_ARGS_KEY}: expected a JSON object in a string (e.g. '{"q":"hi"}'), got ${JSON.stringify(folded)}`,
          path,
        });
      } else if (t.args !== undefined) {
        errors.push({
          code: 'invalid_task',
          message: `tasks.${handle}.params.${KORTECX_TOOL_ARGS_KEY}: the arguments are given twice (also in 'args'); keep one`,
          path,
        });
      } else {
        out.args = parsed;
      }
    }
  } else if (t.kind === 'pure' && t.expr === undefined) {
    out.expr = PASS_THROUGH_EXPR;
  }

  for (const key of Object.keys(params)) {
    if (handled.has(key)) continue;
    const why =
      (BUDGET_KEYS as readonly string[]).includes(key) || key === KORTECX_TOOL_ARGS_KEY
        ? `Kortecx reads it only on a ${key === KORTECX_TOOL_ARGS_KEY ? 'tool' : 'model'} step`
        : 'Stepforge reads no free params';
    warnings.push({
      code: 'no_effect',
      message: `tasks.${handle}.params.${key}: has no effect here (${why}); it is kept only in the Kortecx lowering (graph --format kortecx)`,
      path: [...base, 'params', key],
    });
  }
  return { task: errors.length > 0 ? undefined : (out as ChainTask), errors, warnings, budgetPaths };
}

/** Stepforge's tools are not versioned: a version other than the one a `@tool` grant means is a warning. */
function versionWarnings(handle: string, contract: Record<string, string> | undefined, warnings: KortecxFinding[]): void {
  for (const [tool, version] of Object.entries(contract ?? {})) {
    if (version === KORTECX_GRANT_VERSION) continue;
    warnings.push({
      code: 'no_effect',
      message: `tasks.${handle}.tool_contract.${tool}: version ${JSON.stringify(version)} has no effect here (Stepforge's tools are not versioned; the project's '${tool}' runs)`,
      path: ['tasks', handle, 'tool_contract', tool],
    });
  }
}

/** The tools a model task's `tool_contract` grants, in written order. */
export function contractGrants(task: unknown): string[] {
  if (task === null || typeof task !== 'object') return [];
  const t = task as { kind?: unknown; tool_contract?: unknown };
  if (t.kind !== 'model' || t.tool_contract === null || typeof t.tool_contract !== 'object' || Array.isArray(t.tool_contract)) return [];
  return Object.keys(t.tool_contract);
}
