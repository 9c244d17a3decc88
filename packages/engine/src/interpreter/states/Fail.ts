// Fail: ends the state machine with an Error and a Cause (fixed, from a path, or from JSONata).
import { jsonataBody } from '../../jsonata/JsonataEvaluator.js';
import { evalTemplate } from '../jsonataFields.js';
import { resolveDollarField } from '../pathEnv.js';
import { TaskFailure } from '../TaskFailure.js';
import { json, type ExecutionContext, type StateRun, type StepResult } from '../ExecutionContext.js';

export function runFail(ctx: ExecutionContext, run: StateRun, raw: unknown): StepResult | Promise<StepResult> {
  const st = run.st;
  if (run.ql === 'JSONata') return failJsonata(ctx, run, raw);
  const env = ctx.pathEnv(run);
  const error = typeof st.ErrorPath === 'string' ? resolveDollarField(st.ErrorPath, 'ErrorPath', raw, env) : st.Error;
  const cause = typeof st.CausePath === 'string' ? resolveDollarField(st.CausePath, 'CausePath', raw, env) : st.Cause;
  throw failure(error, cause);
}

async function failJsonata(ctx: ExecutionContext, run: StateRun, raw: unknown): Promise<StepResult> {
  const st = run.st;
  const b = ctx.bindings(run, raw);
  const error = jsonataBody(st.Error) !== undefined ? await evalTemplate(st.Error, 'Error', b) : st.Error;
  const cause = jsonataBody(st.Cause) !== undefined ? await evalTemplate(st.Cause, 'Cause', b) : st.Cause;
  throw failure(error, cause);
}

/** A missing Error becomes '' (left out of ExecutionFailed); non-string values are recorded as JSON text. */
function failure(error: unknown, cause: unknown): TaskFailure {
  return new TaskFailure(
    error === undefined || error === null ? '' : typeof error === 'string' ? error : json(error),
    cause === undefined || cause === null ? undefined : typeof cause === 'string' ? cause : json(cause),
  );
}
