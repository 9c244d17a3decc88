// Which step outputs the state machine reads itself, in JSONata it evaluates, rather than handing
// them to a handler: such an output must arrive inline, since JSONata cannot follow a `{"$ref"}`.
// The envelope of each of those steps says so (`readByStateMachine`), its handler keeps the output
// inline up to STATE_READ_OUTPUT_MAX_BYTES (or fails the step with OutputTooLarge), and the
// payload budget counts it at that size.
import { hasExpression } from '../expr/parseTemplate.js';
import { templatePaths } from '../expr/collectReferences.js';
import type { Template } from '../expr/ExpressionAst.js';
import type { IrExpr, IrStep, IrWorkflow } from '../ir/Ir.js';

/**
 * The ids of the steps whose output the state machine reads itself:
 * - anything a guard (`when`), a condition (`conditional`, `while`, `judge_loop`) or `for_each` items read;
 * - anything a pure / conditional step's JSONata reads;
 * - a path below a step's output (`steps.x.output.field`) in a template the state machine renders — a
 *   Lambda step's input, or the workflow's `output:` (a whole `steps.x.output` is handed on as it is,
 *   and handlers resolve references, also one placed in text);
 * - anything a JSONata input or output expression reads;
 * - the result of a for_each / while body whose step's output is any of the above.
 * Composite steps whose routing reads their own agents' answers (judge_loop, handoff_router) are
 * told apart by kind where their envelopes are built, not listed here.
 */
export function stateReadSteps(wf: IrWorkflow, parse: (text: string) => Template, out = new Set<string>()): Set<string> {
  const all = (e: IrExpr | undefined): void => {
    if (e) for (const r of e.reads) out.add(r);
  };
  const rendered = (e: IrExpr | undefined): void => {
    if (e === undefined) return;
    if (e.kind === 'jsonata') all(e);
    else pathReads(e.value, parse, out);
  };
  for (const step of wf.steps) {
    all(step.when);
    all(step.composite?.condition);
    all(step.composite?.items);
    if (step.kind === 'pure' || step.kind === 'conditional') {
      all(step.expr);
      all(step.input);
    } else rendered(step.input);
    if (step.composite?.body) stateReadSteps(step.composite.body, parse, out);
  }
  rendered(wf.output);
  // A for_each or while step's output is made of its body's result (the array of every iteration's,
  // or the last one's), so when the state machine reads it, it reads those. Marks are added in
  // source order and a later step may mark an earlier composite: repeat until nothing changes.
  for (let before = -1; before !== out.size;) {
    before = out.size;
    for (const step of wf.steps) if (step.composite?.body && out.has(step.id)) bodyResultReads(step.composite.body, out);
  }
  return out;
}

/** Marks what a body's result is made of: its `output:` expression's reads, or its result step. */
function bodyResultReads(body: IrWorkflow, out: Set<string>): void {
  if (body.output) {
    for (const r of body.output.reads) out.add(r);
    return;
  }
  const result = body.steps[body.resultStep ?? body.steps.length - 1];
  if (!result || out.has(result.id)) return;
  out.add(result.id);
  if (result.composite?.body) bodyResultReads(result.composite.body, out);
}

/** Whether a composite step's routing reads its own agents' answers (so their envelopes need them inline). */
export function routesOnItsAgents(step: IrStep): boolean {
  return step.kind === 'judge_loop' || step.kind === 'handoff_router';
}

/** Adds the steps a template value reads below their output (`steps.x.output.<path>`). */
function pathReads(value: unknown, parse: (text: string) => Template, out: Set<string>): void {
  if (typeof value === 'string') {
    if (!hasExpression(value)) return;
    for (const p of templatePaths(parse(value))) if (p.root.kind === 'step' && p.segments.length > 0) out.add(p.root.step);
  } else if (Array.isArray(value)) {
    for (const v of value) pathReads(v, parse, out);
  } else if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) pathReads(v, parse, out);
  }
}
