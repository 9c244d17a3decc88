import type { Checkpoint, HistoryEvent } from '../interpreter/types.js';
import type { ExecutionRecord, ExecutionStore, StateMachineRecord, StoreSnapshot } from './ExecutionStore.js';

/** An ExecutionStore in memory: for tests, benchmarks and `asl run`. Nothing survives the process. */
export class MemoryExecutionStore implements ExecutionStore {
  readonly durable = false;
  private readonly machines = new Map<string, StateMachineRecord>();
  private readonly executions = new Map<string, ExecutionRecord>();
  private readonly events = new Map<string, HistoryEvent[]>();
  private readonly checkpoints = new Map<string, Checkpoint>();

  load(): StoreSnapshot {
    return { stateMachines: [...this.machines.values()], executions: [...this.executions.values()] };
  }
  putStateMachine(r: StateMachineRecord): void {
    this.machines.set(r.stateMachineArn, r);
  }
  deleteStateMachine(arn: string): void {
    this.machines.delete(arn);
  }
  putExecution(r: ExecutionRecord): void {
    this.executions.set(r.executionArn, r);
  }
  appendEvents(arn: string, events: readonly HistoryEvent[]): void {
    let list = this.events.get(arn);
    if (!list) this.events.set(arn, (list = []));
    for (const e of events) list.push(e);
  }
  readEvents(arn: string): HistoryEvent[] {
    return this.events.get(arn) ?? [];
  }
  truncateEvents(arn: string, lastEventId: number): void {
    const list = this.events.get(arn);
    if (list)
      this.events.set(
        arn,
        list.filter((e) => e.id <= lastEventId),
      );
  }
  putCheckpoint(arn: string, cp: Checkpoint | undefined): void {
    if (cp === undefined) this.checkpoints.delete(arn);
    else this.checkpoints.set(arn, cp);
  }
  appendCheckpoint(arn: string, events: readonly HistoryEvent[], cp: Checkpoint): void {
    this.appendEvents(arn, events);
    this.putCheckpoint(arn, cp);
  }
  readCheckpoint(arn: string): Checkpoint | undefined {
    return this.checkpoints.get(arn);
  }
}
