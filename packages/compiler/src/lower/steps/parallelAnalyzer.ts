// A parallel_analyzer step: the analysts in a Parallel, then the aggregator over their headed outputs.
import type { IrStep } from '../../ir/Ir.js';
import { analystKeys } from '../../ir/analystKeys.js';
import { RESULT_VALUE, type Frag, type LowerContext, type Scope } from '../LowerContext.js';

export function lowerAnalyzer(ctx: LowerContext, step: IrStep, scope: Scope, v: string): Frag {
  const c = step.composite ?? {};
  const analysts = c.analysts ?? [];
  const par = ctx.helper(step, 'analysts');
  const agg = ctx.stepNames.get(step)!;
  const collected = ctx.names.variable(`${v}_analyses`);
  const input = step.input ? ctx.field(step.input, scope, step) : undefined;
  const keys = analystKeys(analysts);
  const branches = analysts.map((a, i) => {
    const inner: Scope = { ...scope, label: par, states: {}, produced: [], failState: undefined, top: false, env: scope.env.child() };
    const sName = ctx.helper(step, keys[i]!);
    const s = ctx.agentTask(step, inner, a, sName, input ?? null, {});
    delete s.Assign;
    s.Output = `{% ${RESULT_VALUE} %}`;
    s.End = true;
    return { StartAt: sName, States: inner.states };
  });
  // Each analyst's output under its own header (`## <agent>`, as GraphN writes it), in list order.
  const headed = keys
    .map((k, i) => `${JSON.stringify(`## ${k}\n`)} & ( $o := $states.result[${i}]; $type($o) = "string" ? $o : $string($o) )`)
    .join(' & "\\n\\n" & ');
  scope.states[par] = {
    Type: 'Parallel',
    Comment: ctx.comment(step, `${analysts.length} analysts in parallel`),
    Branches: branches,
    Assign: {
      [collected]: `{% {"byAnalyst": {${keys.map((k, i) => `${JSON.stringify(k)}: $states.result[${i}]`).join(', ')}}, "text": ${headed || '""'}} %}`,
    },
    Next: agg,
  };
  const aggRef = c.aggregator ?? { agent: 'aggregator', role: 'aggregator', identity: step.identity };
  const aggState = ctx.agentTask(
    step,
    scope,
    aggRef,
    agg,
    { task: input ?? null, analyses: `{% $${collected}.text %}`, byAnalyst: `{% $${collected}.byAnalyst %}` },
    { [v]: `{% ${RESULT_VALUE} %}` },
  );
  return { entry: par, tails: [{ holder: aggState, field: 'Next' }] };
}
