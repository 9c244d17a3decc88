// Choice: moves to the Next of the first rule that matches (JSONPath rules or JSONata Conditions), else to Default.
import { jsonataBody } from '../../jsonata/JsonataEvaluator.js';
import { evaluateChoiceRule } from '../choiceRules.js';
import { evalField } from '../jsonataFields.js';
import { RuntimeFailure } from '../StateError.js';
import { assignPath, inputPath, jsonataExit, outputPath } from '../stateIo.js';
import { TaskFailure } from '../TaskFailure.js';
import { json, typeName, type ExecutionContext, type Obj, type StateRun, type StepResult } from '../ExecutionContext.js';

/** JSONPath Choice states run without an await, as Pass states do (the hot path of loops). */
export function runChoice(ctx: ExecutionContext, run: StateRun, raw: unknown): StepResult | Promise<StepResult> {
  if (run.ql === 'JSONata') return choiceJsonata(ctx, run, raw);
  const st = run.st;
  const eff = inputPath(ctx, run, raw);
  const env = ctx.pathEnv(run);
  let taken: Obj | undefined;
  for (const rule of (st.Choices as Obj[]) ?? []) {
    if (evaluateChoiceRule(rule, eff, env)) {
      taken = rule;
      break;
    }
  }
  if (taken === undefined && st.Default === undefined) throw new TaskFailure('States.NoChoiceMatched', `No Matches!`);
  // The matched rule's Assign, or the state's own when the Default is taken.
  const assigned = assignPath(ctx, run, taken ? taken.Assign : st.Assign, eff);
  const output = outputPath(ctx, run, eff);
  ctx.exit(run, output, assigned);
  return { output, next: (taken ? taken.Next : st.Default) as string };
}

async function choiceJsonata(ctx: ExecutionContext, run: StateRun, raw: unknown): Promise<StepResult> {
  const st = run.st;
  const b = ctx.bindings(run, raw);
  for (const [i, rule] of ((st.Choices as Obj[]) ?? []).entries()) {
    const cond = jsonataBody(rule.Condition);
    const ok = cond !== undefined ? await evalField(cond, `Choices[${i}]/Condition`, b) : rule.Condition;
    if (typeof ok !== 'boolean') {
      throw new RuntimeFailure(
        'States.QueryEvaluationError',
        `The JSONata expression '${cond}' specified for the field 'Condition' returned an unexpected result type. Expected 'boolean', but was '${typeName(ok)}' for value: ${json(ok)}`,
        'Condition',
      );
    }
    if (ok) return jsonataExit(ctx, run, rule, raw, raw, rule.Next as string);
  }
  if (st.Default === undefined) throw new TaskFailure('States.NoChoiceMatched', `No Matches!`);
  return jsonataExit(ctx, run, st, raw, raw, st.Default as string);
}
