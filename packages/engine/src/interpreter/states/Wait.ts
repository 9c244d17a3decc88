// Wait: waits Seconds, SecondsPath, Timestamp or TimestampPath (or their JSONata forms) on the execution's clock.
import { jsonataBody } from '../../jsonata/JsonataEvaluator.js';
import { parseTimestamp } from '../choiceRules.js';
import { evalTemplate } from '../jsonataFields.js';
import { requirePath } from '../pathEnv.js';
import { RuntimeFailure } from '../StateError.js';
import { assignJsonata, assignPath, inputPath, nextOf, outputPath } from '../stateIo.js';
import { json, typeName, type ExecutionContext, type StateRun, type StepResult } from '../ExecutionContext.js';

export async function runWait(ctx: ExecutionContext, run: StateRun, raw: unknown): Promise<StepResult> {
  if (run.ql === 'JSONata') return waitJsonata(ctx, run, raw);
  const st = run.st;
  const eff = inputPath(ctx, run, raw);
  const env = ctx.pathEnv(run);
  let ms = 0;
  if (typeof st.Seconds === 'number') ms = st.Seconds * 1000;
  else if (typeof st.SecondsPath === 'string') {
    const s = requirePath(st.SecondsPath, eff, env);
    if (typeof s !== 'number' || !Number.isInteger(s)) {
      throw new RuntimeFailure(
        'States.Runtime',
        `The SecondsPath parameter cannot be parsed as a long value: ${st.SecondsPath} == ${typeof s === 'string' ? s : json(s)}`,
      );
    }
    if (s < 0)
      throw new RuntimeFailure('States.Runtime', `The SecondsPath parameter references a negative value: ${st.SecondsPath} == ${s}`);
    ms = s * 1000;
  } else if (typeof st.Timestamp === 'string') ms = parseTimestamp(st.Timestamp) - ctx.clock.now();
  else if (typeof st.TimestampPath === 'string') {
    const t = requirePath(st.TimestampPath, eff, env);
    const at = parseTimestamp(t);
    if (Number.isNaN(at)) {
      throw new RuntimeFailure(
        'States.Runtime',
        `The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: ${st.TimestampPath} == ${typeof t === 'string' ? t : json(t)}`,
      );
    }
    ms = at - ctx.clock.now();
  }
  const assigned = assignPath(ctx, run, st.Assign, eff);
  await ctx.sleep(run, ms);
  const output = outputPath(ctx, run, eff);
  ctx.exit(run, output, assigned);
  return { output, next: nextOf(run) };
}

async function waitJsonata(ctx: ExecutionContext, run: StateRun, raw: unknown): Promise<StepResult> {
  const st = run.st;
  const b = ctx.bindings(run, raw);
  let ms = 0;
  if (st.Seconds !== undefined) {
    const s = jsonataBody(st.Seconds) !== undefined ? await evalTemplate(st.Seconds, 'Seconds', b) : st.Seconds;
    if (typeof s !== 'number' || !Number.isInteger(s) || s < 0) {
      throw new RuntimeFailure(
        'States.QueryEvaluationError',
        `The JSONata expression '${jsonataBody(st.Seconds) ?? String(st.Seconds)}' specified for the field 'Seconds' returned an unexpected result type. Expected 'integer', but was '${typeName(s)}' for value: ${json(s)}`,
        'Seconds',
      );
    }
    ms = s * 1000;
  } else if (st.Timestamp !== undefined) {
    const t = jsonataBody(st.Timestamp) !== undefined ? await evalTemplate(st.Timestamp, 'Timestamp', b) : st.Timestamp;
    const at = parseTimestamp(t);
    if (Number.isNaN(at)) {
      throw new RuntimeFailure(
        'States.QueryEvaluationError',
        `The Timestamp field cannot be parsed as an ISO-8601 extended offset date-time format string: ${typeof t === 'string' ? t : json(t)}`,
        'Timestamp',
      );
    }
    ms = at - ctx.clock.now();
  }
  const assigned = await assignJsonata(ctx, run, st.Assign, raw);
  const output = st.Output !== undefined ? await evalTemplate(st.Output, 'Output', b) : raw;
  await ctx.sleep(run, ms);
  ctx.exit(run, output, assigned);
  return { output, next: nextOf(run) };
}
