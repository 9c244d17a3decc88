import type { DispatchGuard } from '../runtime/runIdempotent.js';
import type { Runtime } from '../runtime/Runtime.js';

/** What a connector action receives besides its input. */
export interface ConnectorContext {
  readonly runtime: Runtime;
  readonly runId: string;
  readonly stepId: string;
  /** Stable per step execution: sent as the `Idempotency-Key` where the target supports one. */
  readonly idempotencyKey: string;
  readonly guard: DispatchGuard;
}

/** One connector action (`slack.send_message`, `http.request`, …). */
export interface ConnectorAction {
  /** True when the call carries something the target de-duplicates on, so a repeat is harmless. */
  idempotent(input: Record<string, unknown>): boolean;
  run(input: Record<string, unknown>, ctx: ConnectorContext): Promise<unknown>;
}

/** A connector: named actions. */
export interface Connector {
  readonly name: string;
  readonly actions: Readonly<Record<string, ConnectorAction>>;
}
