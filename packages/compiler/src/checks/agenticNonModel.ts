// Tools are granted to model steps only: a tool, connector or pure step has no model to call them.
import type { CheckFinding } from './CheckFinding.js';

/** Kinds known not to be model steps. A misspelt kind is not one of them: the task check reports it. */
const NON_MODEL_KINDS: ReadonlySet<string> = new Set(['tool', 'connector', 'pure']);

/** An `agentic_non_model` finding when step `handle` of `kind` is granted `tools` but is not a model step. */
export function agenticNonModel(
  handle: string,
  kind: string,
  tools: readonly string[],
): (CheckFinding & { readonly code: 'agentic_non_model' }) | undefined {
  if (tools.length === 0 || !NON_MODEL_KINDS.has(kind)) return undefined;
  return {
    code: 'agentic_non_model',
    message: `'${handle}' is a ${kind} step; only model steps can be granted tools (${tools.map((t) => '@' + t).join(' ')})`,
    details: { handle, kind, tools },
  };
}
