// A conditional step: its condition as a Pass, and its inline then: / else: branches when it has them.
import type { IrStep } from '../../ir/Ir.js';
import { type AslState, type Frag, type LowerContext, type Scope } from '../LowerContext.js';

/** The condition's value in the step's variable; with inline branches, the Choice that runs one. */
export function lowerConditional(ctx: LowerContext, step: IrStep, scope: Scope, v: string): Frag {
  const cond = ctx.lowerPass(
    step,
    scope,
    v,
    ctx.conditionJsonata(step.composite?.condition, scope, step),
    'Condition evaluated in JSONata (no Lambda)',
  );
  return step.composite?.body ? lowerBranches(ctx, step, scope, v, cond) : cond;
}

/**
 * A conditional's inline `then:` / `else:`: after the condition (in `v`), a Choice runs the branch
 * it picks and sets the other branch's variable to null (a skipped step stores no output, as a
 * false `when` does); a Pass then makes the taken branch's output the conditional's (null when the
 * picked branch is not written).
 */
function lowerBranches(ctx: LowerContext, step: IrStep, scope: Scope, v: string, cond: Frag): Frag {
  const c = step.composite!;
  const body = c.body!;
  const pick = ctx.helper(step, 'then or else?');
  const join = ctx.helper(step, 'output');
  const lower = (i: number | undefined) => {
    const s = i === undefined ? undefined : body.steps[i];
    return s ? { frag: ctx.lowerStep(s, scope), variable: scope.env.get(s.id)! } : undefined;
  };
  const yes = lower(c.thenStep);
  const no = lower(c.elseStep);
  const joinState: AslState = {
    Type: 'Pass',
    Comment: ctx.comment(step, 'its output is the output of the branch that ran'),
    Assign: { [v]: `{% $${v} ? ${yes?.variable ?? 'null'} : ${no?.variable ?? 'null'} %}` },
  };
  scope.states[join] = joinState;
  const rule = (taken: typeof yes, other: typeof yes, condition: string): Record<string, unknown> => {
    const r: Record<string, unknown> = { Condition: condition };
    if (other) r.Assign = { [other.variable.slice(1)]: null };
    if (taken) ctx.connect([{ holder: r, field: 'rule' }], taken.frag);
    else r.Next = join;
    return r;
  };
  scope.states[pick] = {
    Type: 'Choice',
    Comment: ctx.comment(step, 'runs then: when the condition holds, else: otherwise; the other branch is skipped'),
    Choices: [rule(yes, no, `{% $${v} %}`), rule(no, yes, '{% true %}')],
  };
  ctx.patch(cond.tails, pick);
  for (const b of [yes, no]) if (b) ctx.patch(b.frag.tails, join);
  return { entry: cond.entry, tails: [{ holder: joinState, field: 'Next' }] };
}
