// A Contenox chat_completion that hands its tool calls to an execute_tool_calls task: the model turn
// and the Map over the calls, two steps sharing the conversation's counters.
import type { IrStep } from '../../ir/Ir.js';
import { type AslState, type Frag, type LowerContext, type Scope, type TurnVariables } from '../LowerContext.js';

/**
 * One model turn of a step whose tool calls another step runs (IrStep.handsOverToolCalls): the
 * agent loop's reason Task alone, continuing the conversation at the turn the variables hold with
 * the results the other step left. Its variable is the answer once the model asks for no tools.
 */
export function lowerHandedOverTurn(ctx: LowerContext, step: IrStep, scope: Scope, v: string, t: TurnVariables): Frag {
  const name = ctx.stepNames.get(step)!;
  const budget = step.budget ?? { maxTurns: 16, maxToolCalls: 20 };
  const state = ctx.taskState(
    step,
    scope,
    'model',
    ctx.payload(step, scope, {
      kind: 'model',
      role: 'reason',
      turn: { index: `{% $${t.turn} %}`, toolResults: `{% $${t.results} %}` },
      budget: {
        maxTurns: budget.maxTurns,
        maxToolCalls: budget.maxToolCalls,
        turnsUsed: `{% $${t.turn} %}`,
        toolCallsUsed: `{% $${t.calls} %}`,
      },
    }),
    {
      [v]: '{% $states.result.done = true ? $states.result.output : null %}',
      [t.reply]: '{% $states.result %}',
    },
    'one model turn (model Lambda); the tool calls it asks for are run by the task its tool_call branch goes to',
  );
  scope.states[name] = state;
  scope.env.set(step.id, `$${v}`);
  scope.produced.push({ variable: v, steps: [step.id] });
  return { entry: name, tails: [{ holder: state, field: 'Next' }] };
}

/**
 * Runs the tool calls the last turn of `of` handed over: a Map over them (the tool Lambda each,
 * through a task token, so a gated call waits for a human), whose results go to that step's next
 * turn. Its variable is the list of results.
 */
export function lowerHandedOverCalls(ctx: LowerContext, step: IrStep, scope: Scope, v: string, of: IrStep, t: TurnVariables): Frag {
  const name = ctx.stepNames.get(step)!;
  const budget = of.budget ?? { maxTurns: 16, maxToolCalls: 20 };
  const toolTask = ctx.helper(step, 'tool');
  const iterScope: Scope = { ...scope, label: name, states: {}, produced: [], failState: undefined, top: false, env: scope.env.child() };
  iterScope.states[toolTask] = ctx.toolCallState(step, scope, iterScope, budget, t.turn, t.calls, 'task');
  const state: AslState = {
    Type: 'Map',
    Comment: ctx.comment(step, `the tool calls '${of.id}' asked for`),
    Items: `{% $exists($${t.reply}.toolCalls) ? $append([], $${t.reply}.toolCalls) : [] %}`,
    MaxConcurrency: 10,
    ItemProcessor: { ProcessorConfig: { Mode: 'INLINE' }, StartAt: toolTask, States: iterScope.states },
    Assign: {
      [v]: '{% $states.result %}',
      [t.results]: '{% $states.result %}',
      [t.turn]: `{% $${t.turn} + 1 %}`,
      [t.calls]: `{% $${t.calls} + $count($states.result) %}`,
    },
    Catch: [{ ErrorEquals: ['States.ALL'], Output: `{% [${JSON.stringify(step.id)}, $states.errorOutput] %}`, Next: ctx.failState(scope) }],
  };
  scope.states[name] = state;
  scope.env.set(step.id, `$${v}`);
  scope.produced.push({ variable: v, steps: [step.id] });
  return { entry: name, tails: [{ holder: state, field: 'Next' }] };
}
