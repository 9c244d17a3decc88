import { TaskFailure } from '../interpreter/TaskFailure.js';
import type { ContextObject, TaskHooks, TaskInvocation } from '../interpreter/types.js';
import type { ServiceResource } from './parseServiceResource.js';
import { withSdkMetadata } from './SdkHttpMetadata.js';

/** A finished (or running) execution as the `.sync` integrations report it. */
export interface ChildExecutionDescription {
  readonly executionArn: string;
  readonly stateMachineArn: string;
  readonly name: string;
  readonly status: string;
  /** Epoch milliseconds. */
  readonly startDate: number;
  readonly stopDate?: number;
  /** JSON text. */
  readonly input: string;
  readonly output?: string;
  readonly error?: string;
  readonly cause?: string;
  readonly redriveCount?: number;
}

/** What `arn:aws:states:::states:startExecution` needs from the executions manager. */
export interface ChildExecutions {
  /** Starts an execution (StartExecution semantics, incl. name idempotency and its errors). */
  startChild(
    params: { stateMachineArn: string; input: string; name?: string },
    parent: ContextObject,
  ): Promise<{ executionArn: string; startDate: number }>;
  /** Resolves once the execution is no longer RUNNING. */
  waitForExecution(executionArn: string, signal: AbortSignal): Promise<ChildExecutionDescription>;
  /** Stops a child whose parent task was aborted. */
  stopChild(executionArn: string, error: string, cause: string): Promise<void>;
}

/** `states:startExecution` with the request, `.sync`, `.sync:2` and `.waitForTaskToken` patterns. */
export class StartExecutionResource {
  constructor(private readonly executions?: ChildExecutions) {}

  /** A reason the resource is unsupported, or undefined. */
  supports(r: ServiceResource): string | undefined {
    if (r.service !== 'states' || r.action !== 'startExecution') return `states:${r.action} is not supported (only states:startExecution)`;
    if (!this.executions) return 'states:startExecution needs the executions manager (run through the API server or `asl run`)';
    return undefined;
  }

  /** Starts the child and, for `.sync`/`.sync:2`, waits for it to finish. */
  async invoke(r: ServiceResource, inv: TaskInvocation, _hooks: TaskHooks): Promise<unknown> {
    const executions = this.executions!;
    const p = (inv.input ?? {}) as Record<string, unknown>;
    if (typeof p.StateMachineArn !== 'string') {
      throw new TaskFailure('States.Runtime', "The field 'StateMachineArn' is required by states:startExecution and must be a string.");
    }
    const input = p.Input === undefined ? '{}' : typeof p.Input === 'string' ? p.Input : JSON.stringify(p.Input);
    let started: { executionArn: string; startDate: number };
    try {
      started = await executions.startChild(
        { stateMachineArn: p.StateMachineArn, input, ...(typeof p.Name === 'string' ? { name: p.Name } : {}) },
        inv.context,
      );
    } catch (e) {
      const err = e as { type?: string; message?: string };
      // As AWS names an optimized integration's error: the service, then the SDK's exception class.
      const type = err.type ?? 'AWSStepFunctions';
      throw new TaskFailure(
        `StepFunctions.${type.endsWith('Exception') ? type : `${type}Exception`}`,
        `${err.message ?? String(e)} (Service: AWSStepFunctions; Status Code: 400; Error Code: ${err.type ?? 'Unknown'}; Proxy: null)`,
      );
    }
    if (r.pattern === 'request' || r.pattern === 'waitForTaskToken') {
      return withSdkMetadata({ ExecutionArn: started.executionArn, StartDate: started.startDate }, 'states');
    }
    let done: ChildExecutionDescription;
    try {
      done = await executions.waitForExecution(started.executionArn, inv.signal);
    } catch (e) {
      // The parent task ended (timeout, stop, sibling failure): the child is stopped with it.
      await executions.stopChild(started.executionArn, 'States.Aborted', 'The parent task was aborted.').catch(() => undefined);
      throw e;
    }
    const parsed = r.pattern === 'sync:2';
    const out = describeOutput(done, parsed);
    if (done.status !== 'SUCCEEDED') throw new TaskFailure('States.TaskFailed', JSON.stringify(out));
    return out;
  }
}

/** DescribeExecution's response as the `.sync` integrations return it (`.sync:2` parses Input/Output). */
function describeOutput(d: ChildExecutionDescription, parsed: boolean): Record<string, unknown> {
  const json = (t: string | undefined) => (t === undefined ? undefined : parsed ? safeParse(t) : t);
  const out: Record<string, unknown> = {
    ExecutionArn: d.executionArn,
    Input: json(d.input),
    InputDetails: { Included: true },
    Name: d.name,
  };
  if (d.output !== undefined) {
    out.Output = json(d.output);
    out.OutputDetails = { Included: true };
  }
  out.RedriveCount = d.redriveCount ?? 0;
  out.StartDate = d.startDate;
  out.StateMachineArn = d.stateMachineArn;
  out.Status = d.status;
  if (d.stopDate !== undefined) out.StopDate = d.stopDate;
  if (d.error !== undefined) out.Error = d.error;
  if (d.cause !== undefined) out.Cause = d.cause;
  return out;
}

function safeParse(t: string): unknown {
  try {
    return JSON.parse(t);
  } catch {
    return t;
  }
}
