// A plain Lambda step (model or agent without tools, tool, connector, function, …): one Task.
import type { LambdaStepKind } from '@stepforge/contract';
import type { IrStep } from '../../ir/Ir.js';
import { nextFrag, RESULT_VALUE, RESULT_VALUE_LEAF, type Frag, type LowerContext, type Scope } from '../LowerContext.js';

export function lowerTask(ctx: LowerContext, step: IrStep, scope: Scope, v: string): Frag {
  const name = ctx.stepNames.get(step)!;
  const kind = (step.kind === 'agent' ? 'agent' : step.kind) as LambdaStepKind;
  // Assigned onto `{}` rather than written as a literal: see nextFrag.
  const assign: Record<string, unknown> = {};
  assign[v] = step.outputExpr !== undefined ? `{% ( $out := ${RESULT_VALUE}; ${step.outputExpr} ) %}` : RESULT_VALUE_LEAF;
  const state = ctx.taskState(
    step,
    scope,
    kind,
    ctx.payload(step, scope),
    assign,
    kind === 'tool' ? 'answered through a task token (a gated call waits for a human)' : undefined,
  );
  scope.states[name] = state;
  return nextFrag(name, state);
}
