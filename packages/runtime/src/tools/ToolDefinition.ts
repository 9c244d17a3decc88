import type { DispatchGuard } from '../runtime/runIdempotent.js';
import type { Runtime } from '../runtime/Runtime.js';

/** What a tool implementation gets besides its arguments. */
export interface ToolContext {
  readonly runtime: Runtime;
  readonly runId: string;
  readonly stepId: string;
  /** Call `guard.dispatch(target)` right before a side effect leaves the process. */
  readonly guard: DispatchGuard;
  readonly signal?: AbortSignal;
}

/** A tool in the registry: its model-facing description and schema, its policy facts, and its code. */
export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments, offered to the model. */
  readonly inputSchema: Readonly<Record<string, unknown>>;
  /** Reaches outside the process in a way that changes something (so a crash must not repeat it blindly). */
  readonly sideEffect: boolean;
  /** True when this particular call is safe to repeat (e.g. it carries an idempotency key). */
  idempotent?(args: Record<string, unknown>): boolean;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown>;
}

/** The tools available to this runtime, by name. */
export class ToolRegistry {
  readonly #tools = new Map<string, ToolDefinition>();

  register(tool: ToolDefinition): this {
    this.#tools.set(tool.name, tool);
    return this;
  }

  get(name: string): ToolDefinition | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  list(): ToolDefinition[] {
    return [...this.#tools.values()];
  }
}
