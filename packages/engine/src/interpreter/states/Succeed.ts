// Succeed: ends the state machine (or its branch or iteration) with its input as output.
import { evalTemplate } from '../jsonataFields.js';
import { inputPath, outputPath } from '../stateIo.js';
import type { ExecutionContext, StateRun, StepResult } from '../ExecutionContext.js';

export function runSucceed(ctx: ExecutionContext, run: StateRun, raw: unknown): StepResult | Promise<StepResult> {
  if (run.ql === 'JSONata') return succeedJsonata(ctx, run, raw);
  const output = outputPath(ctx, run, inputPath(ctx, run, raw));
  ctx.exit(run, output);
  return { output };
}

async function succeedJsonata(ctx: ExecutionContext, run: StateRun, raw: unknown): Promise<StepResult> {
  const output = run.st.Output !== undefined ? await evalTemplate(run.st.Output, 'Output', ctx.bindings(run, raw)) : raw;
  ctx.exit(run, output);
  return { output };
}
