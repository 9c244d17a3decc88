// A Contenox task chain as loaded: the tasks in source order with their transitions resolved to
// task indices. Plain data; the checks and the IR builder are functions over it.
import type { SourceLocation } from '@stepforge/contract';

/** The handlers Contenox's task engine knows. */
export const CONTENOX_HANDLERS = ['chat_completion', 'execute_tool_calls', 'tools', 'route', 'noop', 'raise_error'] as const;
export type ContenoxHandler = (typeof CONTENOX_HANDLERS)[number];

/** The branch operators Contenox's task engine knows. */
export const CONTENOX_OPERATORS = ['equals', 'contains', 'starts_with', 'ends_with', 'default', 'edge_traversed_at_least'] as const;
export type ContenoxOperator = (typeof CONTENOX_OPERATORS)[number];

/** Where a branch goes: a task index, or the end of the chain (`end` or an empty goto). */
export type ContenoxTarget = number | 'end';

/** One transition branch, in its order (first match wins). */
export interface ContenoxBranch {
  readonly operator: ContenoxOperator;
  readonly when: string;
  readonly goto: ContenoxTarget;
  /** edge_traversed_at_least: the counted edge as task indices (`end`: the chain ending from the first). */
  readonly edge?: readonly [number, ContenoxTarget];
  readonly location: SourceLocation;
}

/** One task. `data` is the task object with its macros filled (or kept, see loadContenoxDocument). */
export interface ContenoxTask {
  readonly id: string;
  readonly index: number;
  readonly handler: ContenoxHandler;
  readonly data: Readonly<Record<string, unknown>>;
  readonly branches: readonly ContenoxBranch[];
  /** transition.on_failure: the task a failure goes to; absent: the run fails. */
  readonly onFailure?: number;
  /** Our tool names the task is granted (Contenox names mapped, see contenoxTools). */
  readonly tools: readonly string[];
  readonly location: SourceLocation;
}

/** A loaded chain. */
export interface ContenoxDocument {
  readonly id?: string;
  readonly description?: string;
  readonly tokenLimit?: number;
  readonly tasks: readonly ContenoxTask[];
}
