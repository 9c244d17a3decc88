/**
 * A tier is a policy row: how many agentic steps (model steps granted tools) a workflow may have,
 * and the budget each one gets. Projects extend the table by passing their own rows.
 */
export interface Tier {
  readonly name: string;
  /** Fewest model steps granted a tool that a workflow of this tier must have. */
  readonly minAgenticSteps: number;
  /** Most model steps granted a tool that a workflow of this tier may have. */
  readonly maxAgenticSteps: number;
  /** Reasoning turns per agentic step; `max_turns` may narrow this, never widen it. */
  readonly maxTurns: number;
  /** Tool calls per agentic step; `max_tool_calls` may narrow this, never widen it. */
  readonly maxToolCalls: number;
}

/** A table of tiers by name. */
export type TierTable = Readonly<Record<string, Tier>>;

/** The built-in tiers: `standard` (1–8 agentic steps, 16 turns and 20 tool calls each). */
export const DEFAULT_TIERS: TierTable = Object.freeze({
  standard: Object.freeze({ name: 'standard', minAgenticSteps: 1, maxAgenticSteps: 8, maxTurns: 16, maxToolCalls: 20 }),
});

/** The tier used when a document names none. */
export const DEFAULT_TIER_NAME = 'standard';

/** The built-in table extended (or overridden row by row) with a project's own tiers. */
export function resolveTiers(extra?: TierTable): TierTable {
  return extra === undefined ? DEFAULT_TIERS : { ...DEFAULT_TIERS, ...extra };
}
