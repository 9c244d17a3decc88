// A judge_loop step: generator → evaluator → pass_condition, at most max_iterations rounds.
import type { IrStep } from '../../ir/Ir.js';
import { RESULT_VALUE, type Frag, type LowerContext, type Scope } from '../LowerContext.js';

export function lowerJudgeLoop(ctx: LowerContext, step: IrStep, scope: Scope, v: string): Frag {
  const c = step.composite ?? {};
  const name = ctx.stepNames.get(step)!;
  const max = c.maxIterations ?? 5;
  const gen = ctx.helper(step, 'generator');
  const evaluate = ctx.helper(step, 'evaluator');
  const passed = ctx.helper(step, 'passed?');
  const count = ctx.names.variable(`${v}_iteration`);
  const candidate = ctx.names.variable(`${v}_candidate`);
  const evaluation = ctx.names.variable(`${v}_evaluation`);
  const counters = { [count]: 0, [candidate]: null, [evaluation]: null };
  const init = {
    assign: counters,
    materialize: ctx.initPass(
      scope,
      () => name,
      ctx.comment(step, `generate → evaluate → check pass_condition, at most ${max} rounds`),
      () => counters,
      gen,
    ),
  };
  const iterVars = [...scope.iterVars, count];
  // Prompts are text, as GraphN sends them: the worker gets the resolved input_template, and after
  // a failed round the same input followed by the evaluator's feedback; the evaluator gets the
  // worker's output. (Structured prompts re-embedded each round's answer as escaped JSON, so they
  // grew with every round.)
  const task = asText(step.input ? ctx.valueJsonata(step.input, scope, step) : 'null');
  const genState = ctx.agentTask(
    step,
    scope,
    c.generator ?? { agent: 'generator', role: 'generator', identity: step.identity },
    gen,
    `{% ( $task := ${task}; $${count} = 0 ? $task : $task & ${JSON.stringify('\n\nPrevious feedback: ')} & ${asText(`$${evaluation}`)} ) %}`,
    { [candidate]: `{% ${RESULT_VALUE} %}` },
    iterVars,
  );
  genState.Next = evaluate;
  const evalState = ctx.agentTask(
    step,
    scope,
    c.evaluator ?? { agent: 'evaluator', role: 'evaluator', identity: step.identity },
    evaluate,
    `{% ${asText(`$${candidate}`)} %}`,
    { [evaluation]: `{% ${RESULT_VALUE} %}` },
    iterVars,
  );
  evalState.Next = passed;
  // pass_condition sees `input.evaluation`, `input.candidate` and `input.iteration` (DSL contract).
  // pass_condition may read `steps.<this judge_loop>.output`: the latest round's candidate.
  const condEnv = scope.env.child();
  condEnv.set(step.id, `$${candidate}`);
  const condScope: Scope = {
    ...scope,
    env: condEnv,
    inputVar: `$merge([${scope.inputVar}, {"evaluation": $${evaluation}, "candidate": $${candidate}, "iteration": $${count}}])`,
  };
  const result = `{% $${candidate} %}`;
  const pass: Record<string, unknown> = {
    Condition: `{% ${ctx.conditionJsonata(c.condition, condScope, step)} %}`,
    Assign: { [v]: result },
  };
  const exhausted: Record<string, unknown> = { Condition: '{% true %}', Assign: { [v]: result } };
  scope.states[passed] = {
    Type: 'Choice',
    Comment: ctx.comment(step, 'stop when pass_condition holds or the rounds are used up'),
    Choices: [pass, { Condition: `{% $${count} + 1 < ${max} %}`, Assign: { [count]: `{% $${count} + 1 %}` }, Next: gen }, exhausted],
  };
  return {
    entry: gen,
    init,
    tails: [
      { holder: pass, field: 'rule' },
      { holder: exhausted, field: 'rule' },
    ],
  };
}

/** JSONata for a value as prompt text: a string as it is, null or missing as blank, anything else as JSON. */
function asText(jsonata: string): string {
  return `( $o := ${jsonata}; $exists($o) and $type($o) != "null" ? ($type($o) = "string" ? $o : $string($o)) : "" )`;
}
