// A pure step: a JSONata transform in a Pass, no Lambda.
import type { IrStep } from '../../ir/Ir.js';
import type { Frag, LowerContext, Scope } from '../LowerContext.js';

export function lowerPure(ctx: LowerContext, step: IrStep, scope: Scope, v: string): Frag {
  return ctx.lowerPass(
    step,
    scope,
    v,
    step.expr ? ctx.valueJsonata(step.expr, scope, step) : 'null',
    'Pure transform (JSONata, no Lambda)',
  );
}
