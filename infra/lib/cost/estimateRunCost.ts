// What one run of a compiled workflow costs on AWS: runs the ASL on the embedded engine with scripted
// handler replies on a virtual clock, counts state transitions (StateEntered events), Lambda
// invocations and DynamoDB writes, and prices them with ./pricing.ts.
import { stepHandlerIdOf } from '@stepforge/contract';
import { createVirtualClock, executeStateMachine, type HistoryEvent, type TaskInvocation, type TaskInvoker } from '@stepforge/engine';
import { DYNAMO_ASSUMPTIONS, HANDLER_ASSUMPTIONS, RUN_ASSUMPTIONS, US_EAST_1 } from './pricing.js';

/** The manifest fields the estimate reads (the compiler's StepManifest). */
export interface ManifestLike {
  readonly steps: readonly {
    readonly id: string;
    readonly kind?: string;
    readonly handler: string | null;
    /** The state that stands for the step (default: the first of `states`). */
    readonly state?: string;
    readonly states: readonly string[];
    readonly tools: readonly string[];
  }[];
}

/** Per-run counts and prices for one workflow. */
export interface RunCostEstimate {
  readonly status: string;
  readonly transitions: number;
  readonly lambdaInvocations: number;
  readonly invocationsByHandler: Readonly<Record<string, number>>;
  readonly dynamoWrites: number;
  /** Makespan on the virtual clock with the assumed handler durations (ms). */
  readonly durationMs: number;
  /** Steps that are not agent loops (model steps granted tools). */
  readonly plainSteps: number;
  /**
   * Plain step runs: entries of the states that do a step's work outside agent loops — each Lambda
   * Task (plain steps, and the generator / evaluator / analyst / aggregator / hand-off agents of
   * composite steps) and the Pass of a `pure` / `conditional` step — plus each time a step's `when`
   * guard skipped it (the guard's Choice is then what the run spent on that step). Loop and map
   * iterations count each time.
   */
  readonly plainStepRuns: number;
  /** Of plainStepRuns: the visits where a `when` guard skipped its step. */
  readonly skippedStepRuns: number;
  /**
   * Transitions into the agent loops' own states: every state of a model step granted tools, as the
   * manifest lists them (reason Task, tool-call Choice and Map, tool Tasks, init Pass, and the Pass
   * that ends a branch or the run after the loop, since a Choice cannot).
   */
  readonly agentLoopTransitions: number;
  /** Of agentLoopTransitions: entries of the Passes that end a branch or the run after a loop. */
  readonly agentLoopExitTransitions: number;
  /**
   * (transitions − agent-loop transitions) ÷ plain step runs: the work states plus everything around
   * them (Start, Output, Parallel, Map, guards, loop Choices, init and join Passes). Issue 5: ≤ 2.
   */
  readonly transitionsPerPlainStep: number;
  /** USD per million runs. */
  readonly perMillion: {
    readonly standard: number;
    readonly express: number;
    readonly lambda: number;
    readonly dynamo: number;
    readonly totalStandard: number;
    readonly totalExpress: number;
  };
}

/** A plausible output for scripted steps: fields the sample workflows' conditions read. */
const SCRIPTED_OUTPUT = { text: 'scripted output', risk: 'low', pass: true, score: 1, role: 'none', done: true };

/** Sample input from an `input:` section: one value per declared type (arrays get RUN_ASSUMPTIONS items). */
export function sampleInput(section: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (section === null || typeof section !== 'object') return out;
  for (const [name, spec] of Object.entries(section as Record<string, unknown>)) {
    const s = typeof spec === 'string' ? { type: spec } : (spec as { type?: string; default?: unknown });
    if (s && 'default' in s && s.default !== undefined) {
      out[name] = s.default;
      continue;
    }
    switch (s?.type) {
      case 'number':
      case 'integer':
        out[name] = 3;
        break;
      case 'boolean':
        out[name] = true;
        break;
      case 'object':
        out[name] = { id: 'sample-1' };
        break;
      case 'array':
        out[name] = Array.from({ length: RUN_ASSUMPTIONS.arrayInputItems }, (_, i) => `item-${i + 1}`);
        break;
      default:
        out[name] = 'sample';
    }
  }
  return out;
}

/** Scripted handler replies: agent loops do RUN_ASSUMPTIONS tool rounds; other steps succeed at once. */
function scriptedInvoker(
  clock: { sleep(ms: number): Promise<void> },
  counts: Record<string, number>,
  modelTurns: { n: number },
): TaskInvoker {
  return {
    async invoke(invocation: TaskInvocation): Promise<unknown> {
      // `lambda:invoke` names the function in Arguments; a function-ARN Task names it as the Resource.
      const invoke = invocation.resource.startsWith('arn:aws:states:::lambda:invoke');
      const args = (invoke ? (invocation.input ?? {}) : { FunctionName: invocation.resource, Payload: invocation.input }) as {
        FunctionName?: string;
        Payload?: Record<string, any>;
      };
      const handler = stepHandlerIdOf(String(args.FunctionName));
      if (!handler) {
        // Service integrations (SQS approval messages, DynamoDB) cost no Lambda; answer the callback.
        return { scripted: true };
      }
      counts[handler] = (counts[handler] ?? 0) + 1;
      await clock.sleep(HANDLER_ASSUMPTIONS[handler]!.durationMs);
      const env = args.Payload ?? {};
      const usage = { inputTokens: 0, outputTokens: 0 };
      let payload: unknown;
      if (env['turn'] !== undefined) {
        modelTurns.n++;
        const index = Number(env['turn']?.index ?? 0);
        const tools = (env['tools'] as string[] | undefined) ?? [];
        payload =
          index < RUN_ASSUMPTIONS.agentToolRounds && tools.length > 0
            ? {
                done: false,
                toolCalls: Array.from({ length: RUN_ASSUMPTIONS.toolCallsPerAgentRound }, (_, i) => ({
                  id: `call-${index}-${i}`,
                  tool: tools[i % tools.length],
                  args: {},
                })),
                usage,
              }
            : { done: true, output: SCRIPTED_OUTPUT, usage };
      } else if (env['toolCall'] !== undefined) {
        payload = { id: env['toolCall']?.id ?? 'call', tool: env['toolCall']?.tool ?? 'tool', result: { ok: true }, usage };
      } else {
        if (handler === 'model') modelTurns.n++;
        payload = { status: 'succeeded', output: SCRIPTED_OUTPUT, usage };
      }
      // A `.waitForTaskToken` call (tool calls) gets its answer through the token, and a function-ARN Task its
      // handler's answer: the result is the answer itself.
      if (!invoke || invocation.resource.endsWith('.waitForTaskToken')) return payload;
      return { StatusCode: 200, ExecutedVersion: '$LATEST', Payload: payload };
    },
  };
}

/** Every state by name, in branches and item processors too (names are unique per state machine). */
function allStates(asl: Record<string, unknown>): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  const visit = (states: Record<string, Record<string, unknown>> | undefined): void => {
    for (const [name, st] of Object.entries(states ?? {})) {
      out.set(name, st);
      for (const b of (st.Branches as { States?: Record<string, Record<string, unknown>> }[] | undefined) ?? []) visit(b.States);
      visit((st.ItemProcessor as { States?: Record<string, Record<string, unknown>> } | undefined)?.States);
    }
  };
  visit(asl.States as Record<string, Record<string, unknown>> | undefined);
  return out;
}

/**
 * The `when` guards: Choice states with one rule that skips the step (assigning its variable null,
 * see lowerWorkflow's guard) and a Default that runs it. Name → the Default.
 */
function guardStates(states: ReadonlyMap<string, Record<string, unknown>>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, st] of states) {
    const rules = st.Choices as { Assign?: Record<string, unknown> }[] | undefined;
    const assigned = rules?.length === 1 ? Object.values(rules[0]!.Assign ?? {}) : [];
    if (st.Type === 'Choice' && typeof st.Default === 'string' && assigned.length === 1 && assigned[0] === null) out.set(name, st.Default);
  }
  return out;
}

/**
 * How many times a plain step's guard skipped it: the state entered right after the guard's exit
 * (the next event of that thread, by previousEventId) is not the guard's Default.
 */
function countSkips(events: readonly HistoryEvent[], guards: ReadonlyMap<string, string>, plainStates: ReadonlySet<string>): number {
  const exited = new Map<number, string>();
  for (const e of events)
    if (e.type === 'ChoiceStateExited' && guards.has(nameOf(e)) && plainStates.has(nameOf(e))) exited.set(e.id, nameOf(e));
  let skips = 0;
  for (const e of events) {
    if (!e.type.endsWith('StateEntered')) continue;
    const guard = exited.get(e.previousEventId);
    if (guard !== undefined && guards.get(guard) !== nameOf(e)) skips++;
  }
  return skips;
}

/** The state a StateEntered / StateExited event names ('' for other events). */
function nameOf(e: HistoryEvent): string {
  return String(((e['stateEnteredEventDetails'] ?? e['stateExitedEventDetails']) as { name?: string } | undefined)?.name ?? '');
}

/** Run the ASL once with scripted replies and price the run. */
export async function estimateRunCost(
  asl: Record<string, unknown>,
  manifest: ManifestLike,
  input: unknown,
  express: boolean,
): Promise<RunCostEstimate> {
  const clock = createVirtualClock();
  const counts: Record<string, number> = {};
  const modelTurns = { n: 0 };
  const events: HistoryEvent[] = [];
  const result = await executeStateMachine(asl, input, {
    invoker: scriptedInvoker(clock, counts, modelTurns),
    clock,
    stateMachineType: express ? 'EXPRESS' : 'STANDARD',
    collectEvents: false,
    onEvent: (e) => events.push(e),
  });
  const entered = events.filter((e) => e.type.endsWith('StateEntered'));
  const transitions = entered.length;
  const loopStates = new Set(manifest.steps.filter((s) => s.handler === 'model' && s.tools.length > 0).flatMap((s) => s.states));
  const agentLoopTransitions = entered.filter((e) => loopStates.has(nameOf(e))).length;
  const states = allStates(asl);
  const exits = new Set([...loopStates].filter((n) => states.get(n)?.Type === 'Pass' && states.get(n)?.End === true));
  const agentLoopExitTransitions = entered.filter((e) => exits.has(nameOf(e))).length;
  const plain = manifest.steps.filter((s) => !(s.handler === 'model' && s.tools.length > 0));
  const plainSteps = plain.length;
  const work = new Set(
    plain.flatMap((s) =>
      s.states.filter(
        (n) => states.get(n)?.Type === 'Task' || ((s.kind === 'pure' || s.kind === 'conditional') && states.get(n)?.Type === 'Pass'),
      ),
    ),
  );
  for (const n of loopStates) work.delete(n);
  const skippedStepRuns = countSkips(events, guardStates(states), new Set(plain.flatMap((s) => s.states)));
  const plainStepRuns = entered.filter((e) => work.has(nameOf(e))).length + skippedStepRuns;
  const lambdaInvocations = Object.values(counts).reduce((a, b) => a + b, 0);
  const dynamoWrites =
    DYNAMO_ASSUMPTIONS.writesPerRun +
    lambdaInvocations * DYNAMO_ASSUMPTIONS.writesPerInvocation +
    modelTurns.n * DYNAMO_ASSUMPTIONS.extraWritesPerModelTurn;
  const durationMs = Math.max(0, result.stopTime - result.startTime);

  const lambdaPerRun = Object.entries(counts).reduce((sum, [h, n]) => {
    const a = HANDLER_ASSUMPTIONS[h]!;
    return sum + n * (US_EAST_1.lambdaPerRequest + (a.durationMs / 1000) * (a.memoryMb / 1024) * US_EAST_1.lambdaPerGbSecond);
  }, 0);
  const billedExpressMs = Math.max(
    US_EAST_1.expressBillingIncrementMs,
    Math.ceil(durationMs / US_EAST_1.expressBillingIncrementMs) * US_EAST_1.expressBillingIncrementMs,
  );
  const M = 1_000_000;
  const standard = transitions * US_EAST_1.standardPerTransition * M;
  const expressCost =
    (US_EAST_1.expressPerRequest + (billedExpressMs / 1000) * US_EAST_1.expressMemoryGb * US_EAST_1.expressPerGbSecond) * M;
  const lambda = lambdaPerRun * M;
  const dynamo = dynamoWrites * US_EAST_1.dynamoPerWriteUnit * M;
  return {
    status: result.status,
    transitions,
    lambdaInvocations,
    invocationsByHandler: counts,
    dynamoWrites,
    durationMs,
    plainSteps,
    plainStepRuns,
    skippedStepRuns,
    agentLoopTransitions,
    agentLoopExitTransitions,
    transitionsPerPlainStep: plainStepRuns > 0 ? (transitions - agentLoopTransitions) / plainStepRuns : 0,
    perMillion: {
      standard,
      express: expressCost,
      lambda,
      dynamo,
      totalStandard: standard + lambda + dynamo,
      totalExpress: expressCost + lambda + dynamo,
    },
  };
}
