// A model or agent step granted tools: the agent loop every format's tool-using agent becomes.
import type { IrStep } from '../../ir/Ir.js';
import { BUDGET_EXCEEDED, type Frag, type LowerContext, type Scope } from '../LowerContext.js';

/** Reason → Map over the tool calls (tool Lambda each) → back; bounded by the turn and tool-call budget. */
export function lowerAgentLoop(ctx: LowerContext, step: IrStep, scope: Scope, v: string): Frag {
  const budget = step.budget ?? { maxTurns: 16, maxToolCalls: 20 };
  // The reason state keeps the step's own name: it is what the console shows for the step.
  const reason = ctx.stepNames.get(step)!;
  const check = ctx.helper(step, 'tool calls?');
  const tools = ctx.helper(step, 'call tools');
  const toolTask = ctx.helper(step, 'tool');
  const out = ctx.helper(step, 'out of budget');
  const turn = ctx.names.variable(`${v}_turn`);
  const calls = ctx.names.variable(`${v}_calls`);
  const results = ctx.names.variable(`${v}_results`);
  const reply = ctx.names.variable(`${v}_reply`);
  const counters = { [turn]: 0, [calls]: 0, [results]: [] };
  const init = {
    assign: counters,
    materialize: ctx.initPass(
      scope,
      () => ctx.helper(step, 'start'),
      ctx.comment(step, `agent loop: at most ${budget.maxTurns} turns and ${budget.maxToolCalls} tool calls`),
      () => counters,
      reason,
    ),
  };
  scope.states[reason] = ctx.taskState(
    step,
    scope,
    'model',
    ctx.payload(step, scope, {
      kind: 'model',
      role: 'reason',
      turn: { index: `{% $${turn} %}`, toolResults: `{% $${results} %}` },
      budget: {
        maxTurns: budget.maxTurns,
        maxToolCalls: budget.maxToolCalls,
        turnsUsed: `{% $${turn} %}`,
        toolCallsUsed: `{% $${calls} %}`,
      },
    }),
    { [reply]: '{% $states.result %}' },
    'agent turn (model Lambda); the conversation lives in DynamoDB',
  );
  scope.states[reason]!.Next = check;
  const done: Record<string, unknown> = {
    Condition: `{% $${reply}.done = true or $count($${reply}.toolCalls) = 0 %}`,
    Assign: { [v]: `{% $${reply}.output %}` },
  };
  scope.states[check] = {
    Type: 'Choice',
    Comment: ctx.comment(step, 'done, out of budget, or run the requested tools'),
    Choices: [
      done,
      {
        Condition: `{% $${turn} + 1 >= ${budget.maxTurns} or $${calls} + $count($${reply}.toolCalls) > ${budget.maxToolCalls} %}`,
        Next: out,
      },
    ],
    Default: tools,
  };
  scope.states[out] = {
    Type: 'Fail',
    Comment: ctx.comment(step, 'the agent loop ran out of its turn / tool-call budget'),
    Error: BUDGET_EXCEEDED,
    Cause: `{% "step '${step.id}' exceeded its budget of ${budget.maxTurns} turns / ${budget.maxToolCalls} tool calls after " & $string($${turn} + 1) & " turns and " & $string($${calls}) & " tool calls" %}`,
  };
  const iterScope: Scope = { ...scope, label: tools, states: {}, produced: [], failState: undefined, top: false, env: scope.env.child() };
  iterScope.states[toolTask] = ctx.toolCallState(step, scope, iterScope, budget, turn, calls, 'step');
  scope.states[tools] = {
    Type: 'Map',
    Comment: ctx.comment(step, 'the tool calls of this turn'),
    Items: `{% $append([], $${reply}.toolCalls) %}`,
    MaxConcurrency: 10,
    ItemProcessor: { ProcessorConfig: { Mode: 'INLINE' }, StartAt: toolTask, States: iterScope.states },
    Assign: {
      [results]: '{% $states.result %}',
      [turn]: `{% $${turn} + 1 %}`,
      [calls]: `{% $${calls} + $count($states.result) %}`,
    },
    Next: reason,
  };
  return { entry: reason, init, tails: [{ holder: done, field: 'rule', loop: step }] };
}
