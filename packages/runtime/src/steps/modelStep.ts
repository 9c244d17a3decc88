import { didYouMean, mcpToolName, type ModelTurnResult, type StepEnvelope, type StepResult } from '@stepforge/contract';
import { RuntimeError } from '../errors/RuntimeError.js';
import type { ChatMessage } from '../persistence/ConversationStore.js';
import type { ModelTool } from '../providers/ModelProvider.js';
import { selectProvider } from '../providers/selectProvider.js';
import { executeStep, stepInstanceId } from '../runtime/executeStep.js';
import type { Runtime } from '../runtime/Runtime.js';
// The built-in tools this step calls or offers (see provideBuiltinTools).
import '../tools/builtinTools.js';
import { checkCandidate } from './checkCandidate.js';
import { handoffChoice, handoffTargets, handoffTools } from './handoff.js';
import { modelSettings } from './modelSettings.js';
import { renderForPrompt, resolveInputs } from './resolveInputs.js';

/** The model step's answer: a plain StepResult, or a ModelTurnResult inside an agent loop. Always says which provider answered. */
export type ModelStepResult = (StepResult | ModelTurnResult) & { provider: string; model: string };

/**
 * Builds the first user message: the prompt (as the ASL resolved it from the template), plus each
 * parent output the template did not place, as clearly labelled context.
 */
export function buildPrompt(env: StepEnvelope): string {
  const value = env.inputs.value;
  const base =
    typeof value === 'string'
      ? value
      : typeof env.config.prompt === 'string'
        ? env.config.prompt
        : renderForPrompt(value ?? env.inputs.input ?? '');
  // A parallel_analyzer's analyst listed with `focus:` is told what to look at, before the shared input.
  const prompt = typeof env.config.focus === 'string' && env.config.focus.trim() !== '' ? `Focus: ${env.config.focus}\n\n${base}` : base;
  const template =
    typeof env.inputs.template === 'string' ? env.inputs.template : typeof env.config.prompt === 'string' ? env.config.prompt : '';
  const context: string[] = [];
  for (const [name, out] of Object.entries(env.inputs.steps)) {
    // Version 2 envelopes carry only the steps to append (the compiler applied this test); version 1 carries every read step.
    const placed = env.version === 1 && new RegExp(`\\b${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).test(template);
    if (!placed) context.push(`--- Output of step "${name}" ---\n${renderForPrompt(out)}`);
  }
  return context.length === 0 ? prompt : `${prompt}\n\nContext from earlier steps:\n${context.join('\n\n')}`;
}

/** An MCP tool (`mcp.<server>.<tool>`) is offered as granted; its server is looked up when it is called. */
const isMcpToolName = (name: string) => mcpToolName(name) !== undefined;

/** The tools offered to the model: exactly the granted ones that exist in the registry, and MCP tools. */
function offeredTools(rt: Runtime, env: StepEnvelope): ModelTool[] {
  return env.tools.flatMap((name) => {
    const t = rt.tools.get(name);
    if (t) return [{ name: t.name, description: t.description, inputSchema: t.inputSchema }];
    if (isMcpToolName(name))
      return [{ name, description: `MCP tool ${name}`, inputSchema: { type: 'object', additionalProperties: true } }];
    return [];
  });
}

/**
 * A grant of a tool this runtime does not have (a misspelt `tools:` entry or `task@tool`) is not
 * offered to the model, which cannot know it was meant to have it: the agent's first turn records
 * a `ToolNotInstalled` event naming them (runs show lists it), with the closest installed name.
 * Recorded on the state's first try only, so a retried turn does not repeat it.
 */
async function recordMissingTools(rt: Runtime, env: StepEnvelope): Promise<void> {
  const missing = env.tools.filter((name) => !rt.tools.has(name) && !isMcpToolName(name));
  if (missing.length === 0 || env.turn?.index !== 0 || (env.attempt ?? 0) !== 0) return;
  const installed = rt.tools
    .list()
    .map((t) => t.name)
    .sort();
  const named = missing.map((name) => {
    const close = didYouMean(name, installed);
    return `'${name}'${close ? ` (did you mean '${close}'?)` : ''}`;
  });
  await rt.runs.recordEvent({
    runId: env.run.id,
    stepId: stepInstanceId(env),
    type: 'ToolNotInstalled',
    detail: {
      tools: missing,
      installed,
      message: `step ${env.step.id} is granted ${named.join(', ')}, which this runtime has no tool for, so the model is not offered ${missing.length === 1 ? 'it' : 'them'} (tools here: ${installed.join(', ')}; MCP tools are named mcp.<server>.<tool>)`,
    },
  });
}

/**
 * One model call. Without `turn`: a single-shot model step. With `turn`: one reason step of an
 * agent loop — the conversation is loaded from and saved to DynamoDB (never carried in the state),
 * previous tool results are appended, and the turn and tool-call budgets are enforced.
 */
export async function runModelStep(rt: Runtime, rawEnv: StepEnvelope): Promise<ModelStepResult> {
  const env = await resolveInputs(rt, rawEnv);
  const turn = env.turn;
  const budget = env.budget;
  if (turn && budget && turn.index >= budget.maxTurns) {
    throw new RuntimeError('BudgetExceeded', `step ${env.step.id} used its ${budget.maxTurns} turns`, {
      details: { maxTurns: budget.maxTurns, turn: turn.index },
    });
  }
  const settings = modelSettings(env.config);
  const { provider, modelId } = await selectProvider(rt, settings.model);
  const convId = `${env.run.id}#${stepInstanceId(env)}`;
  // A handoff_router's agents (one model call each) are offered a transfer tool per specialist.
  const handoffs = turn ? [] : handoffTargets(env);
  const tools = turn ? offeredTools(rt, env) : handoffTools(handoffs);
  if (turn) await recordMissingTools(rt, env);
  const sub = turn ? `turn${turn.index}` : undefined;

  const done = await executeStep(rt, env, { sub, repeatable: true }, async (guard) => {
    let history: ChatMessage[] = [];
    const fresh: ChatMessage[] = [];
    if (turn && turn.index > 0) {
      history = await rt.conversations.load(convId);
      for (const r of turn.toolResults) {
        fresh.push({ role: 'tool', toolCallId: r.id, toolName: r.tool, content: renderForPrompt(r.result ?? null) });
      }
    } else {
      fresh.push({ role: 'user', content: buildPrompt(env) });
    }
    const messages = [...history, ...fresh];
    const resp = await provider.converse({
      model: modelId,
      system: settings.system,
      messages,
      tools,
      maxTokens: settings.maxTokens,
      temperature: settings.temperature,
      stepId: env.step.id,
      turn: turn?.index ?? 0,
      ...(env.inputs.candidates ? { selectFrom: Object.values(env.inputs.candidates) } : {}),
    });
    const toolCalls = turn ? resp.toolCalls : [];
    if (turn && budget && toolCalls.length > 0 && budget.toolCallsUsed + toolCalls.length > budget.maxToolCalls) {
      throw new RuntimeError(
        'BudgetExceeded',
        `step ${env.step.id} asked for ${toolCalls.length} tool calls with ${budget.maxToolCalls - budget.toolCallsUsed} left of its ${budget.maxToolCalls}`,
        {
          details: { maxToolCalls: budget.maxToolCalls, used: budget.toolCallsUsed, asked: toolCalls.length },
        },
      );
    }
    if (turn && turn.index + 1 >= (budget?.maxTurns ?? Infinity) && toolCalls.length > 0) {
      throw new RuntimeError('BudgetExceeded', `step ${env.step.id} still wants tools on its last allowed turn (${budget?.maxTurns})`, {
        details: { maxTurns: budget?.maxTurns },
      });
    }
    if (toolCalls.length === 0 && env.inputs.candidates) checkCandidate(env.step.id, resp.text, env.inputs.candidates);
    // A first turn that needs no tools is the whole conversation: no later turn will load it, so
    // it is not stored (the step record keeps the answer). Any turn a later one builds on is.
    if (turn && (turn.index > 0 || toolCalls.length > 0)) {
      // Under this attempt's claim: a duplicate attempt's messages must not interleave with these.
      await guard.hold();
      await rt.conversations.append(convId, history.length, [
        ...fresh,
        { role: 'assistant', content: resp.text, ...(toolCalls.length ? { toolCalls } : {}) },
      ]);
    }
    return {
      // A hand-off becomes the `{"handoff": "<role>"}` object the state machine routes on.
      output: handoffChoice(resp, handoffs) ?? resp.text,
      usage: {
        inputTokens: resp.usage.inputTokens,
        outputTokens: resp.usage.outputTokens,
        ...(turn ? { turns: turn.index + 1, toolCalls: (budget?.toolCallsUsed ?? 0) + toolCalls.length } : {}),
      },
      extra: {
        provider: resp.provider,
        model: resp.model,
        ...(turn
          ? { done: toolCalls.length === 0, toolCalls: toolCalls.map((c) => ({ id: c.id, tool: c.tool, args: c.args ?? {} })) }
          : {}),
      },
    };
  });
  const provenance = { provider: String(done.extra.provider), model: String(done.extra.model) };
  if (turn) {
    const calls = (done.extra.toolCalls as ModelTurnResult['toolCalls']) ?? [];
    const isDone = done.extra.done === true;
    return {
      // The progress display tells a reused loop from a re-run one by this (the ASL does not read it).
      ...(done.status === 'reused' ? { status: 'reused' } : {}),
      done: isDone,
      ...(isDone ? { output: done.output } : {}),
      ...(isDone && done.outputRef ? { outputRef: done.outputRef } : {}),
      ...(isDone ? {} : { toolCalls: calls }),
      usage: done.usage,
      ...provenance,
    } as ModelStepResult;
  }
  return {
    status: done.status,
    output: done.output,
    ...(done.outputRef ? { outputRef: done.outputRef } : {}),
    usage: done.usage,
    ...provenance,
  } as ModelStepResult;
}
