// Scripted step handlers for running compiled workflows on the embedded engine: every payload is
// validated against the compiler's StepEnvelope schema, and answers are deterministic functions of
// the envelope, so a run's output proves the data flow the ASL implements.
import { type CompileResult } from '@stepforge/compiler';
import { StepEnvelope } from '@stepforge/contract';
import { checkCandidate } from '@stepforge/runtime';
import {
  createLambdaInvoker,
  createTaskInvoker,
  createVirtualClock,
  executeStateMachine,
  substitutePlaceholders,
  type ExecutionResult,
} from '@stepforge/engine';

/** One scripted answer: return the handler result, or throw an Error whose name is the step error. */
export type Script = (env: StepEnvelope, call: number) => unknown;

/** A run: the engine's result plus every envelope the handlers received. */
export interface ScriptedRun {
  readonly result: ExecutionResult;
  readonly calls: StepEnvelope[];
}

const FUNCTIONS = {
  ModelStepFunctionArn: 'model',
  ToolStepFunctionArn: 'tool',
  ConnectorStepFunctionArn: 'connector',
  FunctionStepFunctionArn: 'function',
  McpToolStepFunctionArn: 'mcp_tool',
};
/** Placeholders → function ARNs, as CDK's DefinitionSubstitutions fill them (plain steps name the function as Resource). */
const SUBSTITUTIONS = Object.fromEntries(
  Object.entries(FUNCTIONS).map(([k, name]) => [k, `arn:aws:lambda:us-east-1:123456789012:function:${name}`]),
);

const show = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v ?? null));

/** The default answers (see the file comment); `overrides` by step id take precedence. */
export function defaultAnswer(env: StepEnvelope): unknown {
  const { step, inputs } = env;
  if (step.role === 'reason') {
    if (env.turn!.index === 0)
      return { done: false, toolCalls: env.tools.map((tool, i) => ({ id: `c${i}`, tool, args: { q: step.id } })), usage: {} };
    return { done: true, output: `${step.id}:done(${env.turn!.toolResults.map((r) => show(r.result)).join(',')})`, usage: {} };
  }
  if (env.toolCall) return { id: env.toolCall.id, tool: env.toolCall.tool, result: `${env.toolCall.tool}:ok` };
  if (step.role === 'evaluator') return { output: { score: 6 + 2 * (step.iteration.at(-1) ?? 0) } };
  if (step.role === 'entry') {
    const specialists = (env.config.specialists as { role: string }[] | undefined) ?? [];
    return { output: specialists.length > 0 ? { handoff: specialists[0]!.role } : 'no handoff' };
  }
  if (env.config.function === 'poll') {
    const attempt = Number((inputs.value as { attempt?: unknown }).attempt);
    return { output: { status: attempt >= 2 ? 'ready' : 'pending', attempt } };
  }
  // Composite roles get `{task, …}`; show the task (and, for the aggregator, the headed analyses).
  const v = inputs.value;
  const obj = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  const shown =
    step.role === 'aggregator' ? `${show(obj?.task)}|${show(obj?.analyses)}` : obj && step.role && 'task' in obj ? show(obj.task) : show(v);
  return { output: `${step.id}${step.role ? `/${step.role}` : ''}<${shown}>` };
}

/** A consensus judge's answer goes through the model handler's own candidate check (a finished turn only). */
function judged(env: StepEnvelope, answer: unknown): unknown {
  const a = answer as { output?: unknown; done?: boolean } | undefined;
  if (env.inputs.candidates && a && (env.step.role !== 'reason' || a.done === true))
    checkCandidate(env.step.id, a.output, env.inputs.candidates);
  return answer;
}

/** Compiles nothing: runs an already compiled workflow with scripted handlers on the embedded engine. */
export async function runScripted(compiled: CompileResult, input: unknown, overrides: Record<string, Script> = {}): Promise<ScriptedRun> {
  const calls: StepEnvelope[] = [];
  const perStep = new Map<string, number>();
  let invoker: ReturnType<typeof createTaskInvoker>;
  const handler = async (event: unknown) => {
    const env = StepEnvelope.parse(event);
    calls.push(env);
    const n = perStep.get(env.step.id) ?? 0;
    perStep.set(env.step.id, n + 1);
    const script = overrides[env.step.id];
    // Tool calls are invoked with `.waitForTaskToken`: answer through the token, as the runtime does.
    const token = (event as { taskToken?: unknown }).taskToken;
    if (typeof token !== 'string') return judged(env, script ? script(env, n) : defaultAnswer(env));
    try {
      invoker.tokens.succeed(token, JSON.stringify(script ? script(env, n) : defaultAnswer(env)));
    } catch (e) {
      invoker.tokens.fail(token, (e as Error).name, (e as Error).message);
    }
    return { status: 'answered through the task token' };
  };
  invoker = createTaskInvoker({
    lambda: createLambdaInvoker(Object.fromEntries(Object.values(FUNCTIONS).map((name) => [name, handler])), {
      substitutions: SUBSTITUTIONS,
    }),
    sqs: false,
    dynamodb: false,
  });
  // The placeholders are filled in the definition text, as CDK's DefinitionSubstitutions and the embedded stack do.
  const definition = JSON.parse(substitutePlaceholders(JSON.stringify(compiled.asl), SUBSTITUTIONS)) as typeof compiled.asl;
  const result = await executeStateMachine(definition, input, {
    invoker,
    clock: createVirtualClock(),
    executionName: 'run-1',
    stateMachineName: compiled.name,
  });
  return { result, calls };
}
