// The two ports the run service is written against. Each platform is an adapter of them: the
// embedded stack (its engine behind the Step Functions API on loopback, workflows registered
// from the project's files) and AWS (Step Functions, the workflows the stack deployed).
import type { DescribeExecutionCommandOutput, HistoryEvent } from '@aws-sdk/client-sfn';
import type { InputSchema } from '@stepforge/contract';
import type { RunRecord } from '../persistence/RunStore.js';

/** What settling a run needs to know about its execution (DescribeExecution's fields). */
export interface ExecutionEnd {
  readonly status?: string;
  readonly output?: string;
  readonly error?: string;
  readonly cause?: string;
  readonly stopDate?: Date | number;
}

/** An execution as DescribeExecution answers it. */
export type ExecutionDescription = DescribeExecutionCommandOutput;

/**
 * The Step Functions operations on executions a run needs. Errors keep the Step Functions API's
 * names (`ExecutionAlreadyExists`, `ExecutionDoesNotExist`, …), whichever side answers.
 */
export interface Executions {
  /** StartExecution; the execution is named after the run, so a repeated start cannot make a second one. */
  start(req: { readonly stateMachineArn: string; readonly name: string; readonly input: string }): Promise<void>;
  /** DescribeExecution, or undefined when it does not exist (yet). */
  describe(executionArn: string): Promise<ExecutionDescription | undefined>;
  /** StopExecution. */
  stop(executionArn: string, error: string, cause: string): Promise<void>;
  /** GetExecutionHistory, every page. */
  history(executionArn: string): Promise<HistoryEvent[]>;
  /**
   * Resolves when the execution has ended (or with its state now, where the side cannot wait on
   * it), undefined when it does not exist (yet). Absent: the service polls `describe`.
   */
  waitFor?(executionArn: string): Promise<ExecutionEnd | undefined>;
}

/** One step of a workflow: what progress displays and forks need. */
export interface CatalogStep {
  readonly id: string;
  readonly kind: string;
  /** The state standing for the step, then every helper state it became. */
  readonly state: string;
  readonly states: readonly string[];
  readonly parent?: string;
  /** True when the step reaches a Lambda (so it has step records). */
  readonly lambda: boolean;
}

/** A workflow a run can be started of. */
export interface WorkflowEntry {
  /** The workflow name: the state machine's, and what runs record. */
  readonly name: string;
  /** The name for people to read (the DSL's `document.name` as written); absent on entries registered before it was kept. */
  readonly displayName?: string;
  readonly file?: string;
  /** The source format (absent for a deployed workflow with no record in the table). */
  readonly format?: 'chain' | 'dsl' | 'contenox' | 'code';
  readonly stateMachineArn: string;
  readonly inputSchema: InputSchema;
  readonly steps: readonly CatalogStep[];
  /** `[from, to]` by step id: `to` runs after (and may read) `from`; nested bodies included. */
  readonly edges: readonly (readonly [string, string])[];
  readonly updatedAt: string;
  /**
   * A hash of what a run of it is (the ASL, the steps and edges, the input schema): a run records
   * the version it ran (RunRecord.workflowVersion), so that it is shown with its own steps after
   * the workflow has changed. Absent on entries registered before versions were kept.
   */
  readonly version?: string;
  /**
   * The approval policy its runs are held to (when it was registered): each run records it, so
   * the handlers gate that run's tool calls by it, whichever process runs them.
   */
  readonly policy?: RunRecord['policy'];
}

/** Which workflows exist, and what a run of each needs to know about it. */
export interface WorkflowCatalog {
  /** The workflow as it is now, or as it was at `version` (undefined when unknown or not kept). */
  get(name: string, version?: string): Promise<WorkflowEntry | undefined>;
  /** The workflow as the run ran it: its version, or for a run that recorded none, as it is now. */
  forRun(run: { readonly workflow: string; readonly workflowVersion?: string }): Promise<WorkflowEntry | undefined>;
  /** Every workflow, by name. */
  list(): Promise<WorkflowEntry[]>;
}
