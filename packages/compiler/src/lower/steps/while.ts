// A while step: the body, then a Choice that runs it again while the condition holds.
import type { IrStep, IrWorkflow } from '../../ir/Ir.js';
import { type Frag, type LowerContext, type Scope } from '../LowerContext.js';

export function lowerWhile(ctx: LowerContext, step: IrStep, scope: Scope, v: string): Frag {
  const c = step.composite ?? {};
  const name = ctx.stepNames.get(step)!;
  const max = c.maxIterations ?? 10;
  const count = ctx.names.variable(`${v}_iteration`);
  const again = ctx.helper(step, 'again?');
  // The body sees `input.iteration` as its index (from 0); the condition, checked after each
  // iteration, as the number of iterations run so far (the index of the next one), so
  // `input.iteration < 3` runs three. Both share the outer scope's variables.
  const iterInput = `$merge([${scope.inputVar}, {"iteration": $${count}}])`;
  const inner: Scope = { ...scope, inputVar: iterInput, iterVars: [...scope.iterVars, count] };
  const body = c.body ?? { steps: [], edges: [] };
  // The body may read `steps.<this while>.output`: the previous iteration's result, kept in the
  // while's own variable (null until the first iteration ends). Only a while whose body reads
  // itself keeps it up to date, so others compile as before.
  const readsSelf = workflowReads(body, step.id);
  if (readsSelf) scope.env.set(step.id, `$${v}`);
  // A body step a sibling above it reads from the previous iteration (see DslWhileStep.carried): the
  // reader, which runs first, reads a variable of the while's scope that holds the value the step had
  // at the end of the last iteration (null before the first); the step itself, once run, rebinds its id.
  const carried = (c.carried ?? []).map((id) => ({ id, variable: ctx.names.variable(`${v}_prev_${id}`) }));
  for (const k of carried) inner.env.set(k.id, `$${k.variable}`);
  const bodyFrag = ctx.lowerWorkflowBody(body, inner, false);
  const carry: Record<string, string> = {};
  for (const k of carried) carry[k.variable] = `{% ${inner.env.get(k.id) ?? 'null'} %}`;
  if (bodyFrag) ctx.patch(bodyFrag.tails, again);
  // The body's steps are visible after it (the condition, the result), as they were in this scope.
  const result = bodyFrag ? ctx.resultExpr(body, inner) : 'null';
  // The condition, checked after an iteration, reads the while's output as that iteration's result.
  const conditionEnv = scope.env.child();
  conditionEnv.set(step.id, `( ${result} )`);
  const conditionScope: Scope = { ...inner, env: conditionEnv, inputVar: `$merge([${scope.inputVar}, {"iteration": $${count} + 1}])` };
  const exit: Record<string, unknown> = { Condition: '{% true %}', Assign: { [v]: `{% ${result} %}` } };
  const condition = ctx.conditionJsonata(c.condition, conditionScope, step);
  scope.states[again] = {
    Type: 'Choice',
    Comment: ctx.comment(step, 'run the body again while the condition holds'),
    Choices: [
      {
        Condition: `{% $${count} + 1 < ${max} and ${condition} %}`,
        // Going round again also re-enters the body (its own init variables, e.g. an agent loop's counters).
        Assign: {
          ...bodyFrag?.init?.assign,
          [count]: `{% $${count} + 1 %}`,
          ...(readsSelf ? { [v]: `{% ${result} %}` } : {}),
          ...carry,
        },
        Next: bodyFrag?.entry ?? again,
      },
      exit,
    ],
  };
  // The counter starts at 0 on the way in (the init Pass, named after the step, only where nothing leads in).
  const assign: Record<string, unknown> = { [count]: 0, ...(readsSelf ? { [v]: null } : {}), ...bodyFrag?.init?.assign };
  for (const k of carried) assign[k.variable] = null;
  const entry = bodyFrag?.entry ?? again;
  return {
    entry,
    init: {
      assign,
      materialize: ctx.initPass(
        scope,
        () => name,
        ctx.comment(step, `loop: the body runs at least once and at most ${max} times`),
        () => assign,
        entry,
      ),
    },
    tails: [{ holder: exit, field: 'rule' }],
  };
}

/** Whether any step of `wf` (its bodies included) reads step `id` (its input, guard, condition or items). */
function workflowReads(wf: IrWorkflow, id: string): boolean {
  return wf.steps.some((s) => {
    const c = s.composite;
    return (
      [s.input, s.when, s.expr, c?.items, c?.condition].some((e) => e?.reads.includes(id)) ||
      (c?.body !== undefined && workflowReads(c.body, id))
    );
  });
}
