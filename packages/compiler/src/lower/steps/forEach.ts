// A for_each step: a Map over the items, each iteration lowering the body in its own scope.
import { jsonataHelperBindings } from '../../expr/jsonataHelpers.js';
import type { IrStep } from '../../ir/Ir.js';
import { type AslState, type Frag, type LowerContext, type Scope } from '../LowerContext.js';
import { valueOf } from '../jsonataText.js';

export function lowerForEach(ctx: LowerContext, step: IrStep, scope: Scope, v: string): Frag {
  const c = step.composite ?? {};
  const name = ctx.stepNames.get(step)!;
  const max = c.maxIterations ?? 50;
  const as = c.as ?? 'item';
  const itemState = ctx.helper(step, 'item');
  const inputVar = ctx.names.variable(`${v}_input`);
  const index = ctx.names.variable(`${v}_index`);
  const inner: Scope = {
    label: name,
    states: {},
    env: scope.env.child(),
    inputVar: `$${inputVar}`,
    iterVars: [...scope.iterVars, index],
    inMap: true,
    produced: [],
  };
  const body = c.body ?? { steps: [], edges: [] };
  const bodyFrag = ctx.lowerWorkflowBody(body, inner, false);
  const first: AslState = {
    Type: 'Pass',
    Comment: ctx.comment(step, `binds input.${as} and the iteration index`),
    Assign: {
      [inputVar]: `{% $merge([${scope.inputVar}, {${JSON.stringify(as)}: $states.input.item}]) %}`,
      [index]: '{% $states.input.index %}',
    },
  };
  inner.states[itemState] = first;
  const frag: Frag = bodyFrag
    ? (ctx.connect([{ holder: first, field: 'Next' }], bodyFrag), bodyFrag)
    : { entry: itemState, tails: [{ holder: first, field: 'Next' }] };
  const result = bodyFrag ? ctx.resultExpr(body, inner) : 'null';
  ctx.closeScope(frag, inner, (assigns) => valueOf(result, assigns));
  const items = c.items ? ctx.valueJsonata(c.items, scope, step) : '[]';
  const state: AslState = {
    Type: 'Map',
    Comment: ctx.comment(step, `for each item (at most ${max}, ${c.parallel ? 'up to 10 at once' : 'one at a time'})`),
    // A missing or null list is no items (not one null item, as $append would make it); a single
    // value is a list of one, as JSONata treats it everywhere. A string holding a JSON array (a
    // step that answered with JSON text) is that array: outputs are parsed for downstream use.
    Items: `{% ( ${jsonataHelperBindings(['$sfJson'])} $raw := ${items}; $parsed := $sfJson($raw); $given := $type($parsed) = 'array' ? $parsed : $raw; $all := $exists($given) and $type($given) != 'null' ? $append([], $given) : []; $append([], $filter($all, function($v, $i) { $i < ${max} })) ) %}`,
    ItemSelector: { item: '{% $states.context.Map.Item.Value %}', index: '{% $states.context.Map.Item.Index %}' },
    MaxConcurrency: c.parallel ? 10 : 1,
    ItemProcessor: { ProcessorConfig: { Mode: 'INLINE' }, StartAt: ctx.foldEntryPass(inner.states, itemState), States: inner.states },
    Assign: { [v]: '{% $states.result %}' },
  };
  scope.states[name] = state;
  return { entry: name, tails: [{ holder: state, field: 'Next' }] };
}
