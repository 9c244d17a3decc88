// A tier is a policy row: how many agentic steps (model steps granted tools) a workflow may have, and
// the turn and tool-call budget of each. A step may narrow its budget, never widen it.
import { didYouMean } from '@stepforge/contract';
import type { Tier, TierTable } from '../tiers/Tier.js';
import type { CheckFinding } from './CheckFinding.js';

/** What the tier rules read of one step of a sound graph. */
export interface TierStep {
  readonly handle: string;
  /** Where the handle starts in the chain expression. */
  readonly start: number;
  readonly kind: string;
  /** Every tool the step is granted. */
  readonly tools: readonly string[];
  /** The step's task as it loaded, when it did: a model task may narrow its budget. */
  readonly task?: { readonly kind: string; readonly max_turns?: number; readonly max_tool_calls?: number };
}

/** Where a tier finding points: into the chain expression, or at a step's budget field. */
export type TierFindingAt =
  { readonly expression: number; readonly length: number } | { readonly handle: string; readonly field: 'max_turns' | 'max_tool_calls' };

/** The agentic steps' budgets under the tier, and every way the workflow breaks it, in order. */
export interface TierLimits {
  readonly findings: readonly { readonly finding: CheckFinding; readonly at: TierFindingAt }[];
  readonly budgets: ReadonlyMap<string, { readonly maxTurns: number; readonly maxToolCalls: number }>;
}

/** How a step's budget field is named where it is written (Kortecx may put it in `params`). */
export type BudgetFieldName = (handle: string, field: 'max_turns' | 'max_tool_calls') => string;

/**
 * Checks `steps` against `tier`: too few agentic steps (only when `kindsKnown`, since a step whose kind
 * is wrong makes the count unreliable and its own error comes first), too many, and each model step's
 * `max_turns` / `max_tool_calls` above the tier's.
 */
export function tierLimits(tier: Tier, steps: readonly TierStep[], kindsKnown: boolean, fieldName: BudgetFieldName): TierLimits {
  const findings: { finding: CheckFinding; at: TierFindingAt }[] = [];
  const budgets = new Map<string, { maxTurns: number; maxToolCalls: number }>();
  const limit = (message: string, at: TierFindingAt) => findings.push({ finding: { code: 'tier_limit', message }, at });
  const agentic = steps.filter((s) => s.tools.length > 0 && s.kind === 'model');
  if (kindsKnown && agentic.length < tier.minAgenticSteps) {
    limit(
      `the ${tier.name} tier needs at least ${tier.minAgenticSteps} model step(s) granted a tool, found ${agentic.length}; grant one with '@', e.g. '${steps.find((s) => s.kind === 'model')?.handle ?? 'plan'}@web-search'`,
      { expression: 0, length: 1 },
    );
  }
  if (agentic.length > tier.maxAgenticSteps) {
    const extra = agentic[tier.maxAgenticSteps]!;
    limit(
      `the ${tier.name} tier allows at most ${tier.maxAgenticSteps} model steps granted tools, found ${agentic.length} ('${extra.handle}' is number ${tier.maxAgenticSteps + 1})`,
      { expression: extra.start, length: extra.handle.length },
    );
  }
  for (const s of steps) {
    if (s.task?.kind !== 'model') continue;
    const turns = s.task.max_turns ?? tier.maxTurns;
    const calls = s.task.max_tool_calls ?? tier.maxToolCalls;
    if (turns > tier.maxTurns) {
      limit(
        `${fieldName(s.handle, 'max_turns')}: ${turns} exceeds the ${tier.name} tier's budget of ${tier.maxTurns} turns per agentic step (it may narrow the budget, never widen it)`,
        { handle: s.handle, field: 'max_turns' },
      );
    }
    if (calls > tier.maxToolCalls) {
      limit(
        `${fieldName(s.handle, 'max_tool_calls')}: ${calls} exceeds the ${tier.name} tier's budget of ${tier.maxToolCalls} tool calls per agentic step (it may narrow the budget, never widen it)`,
        { handle: s.handle, field: 'max_tool_calls' },
      );
    }
    if (s.tools.length > 0)
      budgets.set(s.handle, { maxTurns: Math.min(turns, tier.maxTurns), maxToolCalls: Math.min(calls, tier.maxToolCalls) });
  }
  return { findings, budgets };
}

/** A `tier:` that names no tier of the table. */
export function unknownTier(name: unknown, tiers: TierTable): CheckFinding {
  const known = Object.keys(tiers);
  const suggestion = typeof name === 'string' ? didYouMean(name, known) : undefined;
  return {
    code: 'tier_limit',
    message: `unknown tier ${JSON.stringify(name ?? null)}${suggestion ? `; did you mean '${suggestion}'?` : ''} (known tiers: ${known.join(', ')})`,
  };
}
