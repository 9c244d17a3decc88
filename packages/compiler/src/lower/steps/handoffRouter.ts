// A handoff_router step: the entry agent, then specialists chosen by the role each answer hands off to.
import type { IrStep } from '../../ir/Ir.js';
import { RESULT_VALUE, type Frag, type LowerContext, type Scope } from '../LowerContext.js';

export function lowerHandoff(ctx: LowerContext, step: IrStep, scope: Scope, v: string): Frag {
  const c = step.composite ?? {};
  const specialists = c.specialists ?? [];
  const max = c.maxHandoffs ?? 3;
  const entryName = ctx.stepNames.get(step)!;
  const route = ctx.helper(step, 'route');
  const last = ctx.names.variable(`${v}_last`);
  const hops = ctx.names.variable(`${v}_handoffs`);
  const input = step.input ? ctx.field(step.input, scope, step) : undefined;
  const entry = ctx.agentTask(
    step,
    scope,
    c.entry ?? { agent: 'entry', role: 'entry', identity: step.identity },
    entryName,
    { task: input ?? null },
    { [last]: `{% ${RESULT_VALUE} %}`, [hops]: 0 },
  );
  entry.Next = route;
  // The role an agent transfers to: `{"handoff": "<role>"}` (or `transfer_to`) in its output.
  const roleOf = `( $o := $${last}; $type($o) = "object" ? ($exists($o.handoff) ? $o.handoff : $o.transfer_to) : null )`;
  const choices: Record<string, unknown>[] = specialists.map((s) => {
    const sName = ctx.helper(step, s.role);
    const st = ctx.agentTask(
      step,
      scope,
      s,
      sName,
      { task: input ?? null, handoff: `{% $${last} %}` },
      { [last]: `{% ${RESULT_VALUE} %}`, [hops]: `{% $${hops} + 1 %}` },
      [...scope.iterVars, hops],
    );
    st.Next = route;
    return { Condition: `{% $${hops} < ${max} and ${roleOf} = ${JSON.stringify(s.role)} %}`, Next: sName };
  });
  const done: Record<string, unknown> = { Condition: '{% true %}', Assign: { [v]: `{% $${last} %}` } };
  scope.states[route] = {
    Type: 'Choice',
    Comment: ctx.comment(step, `hand off to ${specialists.map((s) => s.role).join(', ') || 'nobody'} (at most ${max} hand-offs)`),
    Choices: [...choices, done],
  };
  return { entry: entryName, tails: [{ holder: done, field: 'rule' }] };
}
