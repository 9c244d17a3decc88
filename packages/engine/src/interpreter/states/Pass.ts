// Pass: passes its input (or its Result, or its Parameters) to its output.
import { evaluatePayloadTemplate } from '../pathEnv.js';
import { assignPath, inputPath, jsonataExit, nextOf, outputPath, resultPath } from '../stateIo.js';
import type { ExecutionContext, StateRun, StepResult } from '../ExecutionContext.js';

/** JSONPath Pass states run without an await: the hot path of long Pass chains. */
export function runPass(ctx: ExecutionContext, run: StateRun, raw: unknown): StepResult | Promise<StepResult> {
  const st = run.st;
  if (run.ql === 'JSONata') return jsonataExit(ctx, run, st, raw, raw, nextOf(run));
  const eff = inputPath(ctx, run, raw);
  let result: unknown;
  if ('Result' in st) result = st.Result;
  else result = st.Parameters !== undefined ? evaluatePayloadTemplate(st.Parameters, eff, ctx.pathEnv(run)) : eff;
  const assigned = assignPath(ctx, run, st.Assign, result);
  const output = outputPath(ctx, run, resultPath(raw, result, st.ResultPath));
  ctx.exit(run, output, assigned);
  return { output, next: nextOf(run) };
}
