import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { DescribeStateMachineCommand, DescribeStateMachineForExecutionCommand, GetExecutionHistoryCommand } from '@aws-sdk/client-sfn';
import type { SourceLocation } from '@stepforge/contract';
import { runExecutionArn, runSummary, shownExecutionArn, tokensOf } from '@stepforge/runtime';
import {
  type EmbeddedRunService as RunService,
  compileWorkflowFile,
  type WorkflowEntry,
  type RunRecordView,
  type StepRecordView,
} from '@stepforge/embedded';

/** One step of the manifest as the view reads it: the states it became and where it is written. */
export interface ViewStep {
  readonly id: string;
  readonly kind: string;
  readonly state: string;
  readonly states: readonly string[];
  readonly parent?: string;
  readonly location?: SourceLocation;
}

/** The workflow's source beside its graph: the text, and whether it still compiles to what the run ran. */
export interface ViewSource {
  readonly file: string;
  readonly format: string;
  readonly text: string;
  /** The file compiles to another definition than the run's: its locations may not match the graph. */
  readonly changed: boolean;
}

/** What the execution view draws for one run (`GET /view/runs/{id}`). */
export interface RunView {
  readonly run: ReturnType<typeof runSummary> & { input: unknown; output: unknown; error: unknown; executionArn: string | null };
  readonly definition: unknown;
  readonly steps: readonly ViewStep[];
  readonly progress: readonly unknown[];
  readonly records: readonly StepRecordView[];
  readonly history: readonly unknown[];
  readonly events: readonly unknown[];
  readonly approvals: readonly unknown[];
  readonly source: ViewSource | null;
}

interface CompiledSource {
  readonly mtimeMs: number;
  readonly text: string;
  readonly definition: string;
  readonly steps: readonly ViewStep[];
  readonly format: string;
}

/**
 * Reads what the view shows of runs from the run service, the engine and the workflow's file. The
 * compiled source (for step locations) is cached per file and modification time: a live run asks
 * again on every change, and compiling a code module bundles it.
 */
export class RunViewData {
  readonly #compiled = new Map<string, CompiledSource>();

  constructor(
    private readonly service: RunService,
    private readonly projectDir: string,
  ) {}

  /** A run with its definition, manifest steps with locations, history, approvals and source. */
  async run(runId: string): Promise<RunView> {
    const details = await this.service.readableDetails(runId);
    const run = details.run;
    const arn = runExecutionArn(run);
    const entry = await this.service.catalog.forRun(run);
    const [definition, approvals, compiled] = await Promise.all([
      this.#definition(arn, entry),
      this.service.listApprovals('PENDING').then((list) => list.filter((a) => a.runId === runId).map(({ taskToken: _t, ...a }) => a)),
      entry?.file !== undefined ? this.#compile(entry.file).catch(() => undefined) : Promise.resolve(undefined),
    ]);
    const steps: ViewStep[] = compiled?.steps.length
      ? [...compiled.steps]
      : (entry?.steps ?? []).map((s) => ({
          id: s.id,
          kind: s.kind,
          state: s.state,
          states: s.states,
          ...(s.parent !== undefined ? { parent: s.parent } : {}),
        }));
    return {
      run: {
        ...runSummary(run),
        input: run.input ?? null,
        output: run.output ?? null,
        error: run.error ?? null,
        executionArn: shownExecutionArn(run) ?? null,
      },
      definition: definition !== undefined ? JSON.parse(definition) : null,
      steps,
      progress: details.steps,
      records: details.records,
      history: details.history,
      events: details.events,
      approvals,
      source:
        compiled && entry?.file !== undefined
          ? {
              file: entry.file,
              format: compiled.format,
              text: compiled.text,
              changed: definition !== undefined && skeleton(JSON.parse(definition)) !== skeleton(JSON.parse(compiled.definition)),
            }
          : null,
    };
  }

  /** Runs, newest first, with their token use (summed over their step records). */
  async runs(filter: { workflow?: string; status?: RunRecordView['status']; limit?: number }): Promise<unknown[]> {
    const runs = await this.service.listRuns(filter);
    return Promise.all(
      runs.map(async (r) => {
        const records = await this.service.runs.listSteps(r.runId).catch(() => [] as StepRecordView[]);
        const { inputTokens, outputTokens } = tokensOf(records);
        return { ...runSummary(r), tokens: { input: inputTokens, output: outputTokens } };
      }),
    );
  }

  /**
   * What changes when a run moves on: its status and its last history event id (one event read,
   * newest first), and the approvals waiting on it. The stream compares these to say "changed".
   */
  async runFingerprint(runId: string): Promise<string> {
    const run = await this.service.getRun(runId);
    let last = 0;
    try {
      const h = await this.service.stack.sfn.send(
        new GetExecutionHistoryCommand({
          executionArn: runExecutionArn(run),
          maxResults: 1,
          reverseOrder: true,
          includeExecutionData: false,
        }),
      );
      last = h.events?.[0]?.id ?? 0;
    } catch (e) {
      if ((e as { name?: string }).name !== 'ExecutionDoesNotExist') throw e;
    }
    const pending = (await this.service.listApprovals('PENDING')).filter((a) => a.runId === runId).length;
    return `${run.status}:${last}:${pending}`;
  }

  /** What changes in the runs list: each run's id and status, and the approvals waiting. */
  async listFingerprint(): Promise<string> {
    const runs = await this.service.listRuns({ limit: 200 });
    const pending = (await this.service.listApprovals('PENDING')).length;
    return `${pending}|${runs.map((r) => `${r.runId}:${r.status}`).join(',')}`;
  }

  /** The definition the execution started with, else the workflow's as registered (the execution is gone). */
  async #definition(executionArn: string, entry: WorkflowEntry | undefined): Promise<string | undefined> {
    try {
      return (await this.service.stack.sfn.send(new DescribeStateMachineForExecutionCommand({ executionArn }))).definition;
    } catch (e) {
      if ((e as { name?: string }).name !== 'ExecutionDoesNotExist' || entry === undefined) throw e;
    }
    return (await this.service.stack.sfn.send(new DescribeStateMachineCommand({ stateMachineArn: entry.stateMachineArn }))).definition;
  }

  async #compile(file: string): Promise<CompiledSource> {
    const path = isAbsolute(file) ? file : join(this.projectDir, file);
    const { mtimeMs } = statSync(path);
    const cached = this.#compiled.get(path);
    if (cached && cached.mtimeMs === mtimeMs) return cached;
    const { text, compiled } = await compileWorkflowFile(this.projectDir, file);
    const steps = compiled.manifest.steps.map((s) => ({
      id: s.id,
      kind: s.kind,
      state: s.state,
      states: s.states,
      ...(s.parent !== undefined ? { parent: s.parent } : {}),
      ...(s.location !== undefined ? { location: s.location } : {}),
    }));
    // A code module has no document text: its source is the module itself.
    const entry: CompiledSource = {
      mtimeMs,
      text: text || readFileSync(path, 'utf8'),
      definition: JSON.stringify(compiled.asl),
      steps,
      format: compiled.manifest.format,
    };
    this.#compiled.set(path, entry);
    return entry;
  }
}

/**
 * A definition's shape: its states' names, types and transitions, nested. The engine's copy has the
 * Lambda placeholders filled in, so the text differs from the compiler's even when nothing changed.
 */
function skeleton(definition: unknown): string {
  const walk = (states: unknown): unknown =>
    Object.entries((states ?? {}) as Record<string, Record<string, unknown>>).map(([name, st]) => [
      name,
      st.Type,
      st.Next ?? null,
      st.Default ?? null,
      ((st.Choices as { Next?: string }[] | undefined) ?? []).map((c) => c.Next ?? null),
      ((st.Catch as { Next?: string }[] | undefined) ?? []).map((c) => c.Next ?? null),
      ((st.Branches as { States?: unknown }[] | undefined) ?? []).map((b) => walk(b.States)),
      st.ItemProcessor !== undefined ? walk((st.ItemProcessor as { States?: unknown }).States) : null,
    ]);
  return JSON.stringify(walk((definition as { States?: unknown }).States));
}
