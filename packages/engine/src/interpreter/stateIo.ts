// State input and output processing, written once for every state type: JSONPath InputPath,
// Parameters, ResultSelector, ResultPath, OutputPath and Assign; JSONata Arguments, Output and
// Assign; and the payload size quota.
import { compilePath, setAtPath } from '../jsonpath/JsonPath.js';
import { evalTemplate } from './jsonataFields.js';
import { evaluatePayloadTemplate, requirePath } from './pathEnv.js';
import { RuntimeFailure } from './StateError.js';
import { TaskFailure } from './TaskFailure.js';
import { MAX_PAYLOAD_BYTES, json, type ExecutionContext, type Obj, type StateRun, type StepResult } from './ExecutionContext.js';

/** Fails with States.DataLimitExceeded when a value's JSON text is over the 256 KiB quota. */
export function checkSize(run: StateRun, value: unknown, text?: string): void {
  const s = text ?? json(value);
  if (s.length * 3 > MAX_PAYLOAD_BYTES && Buffer.byteLength(s) > MAX_PAYLOAD_BYTES) {
    throw new TaskFailure(
      'States.DataLimitExceeded',
      `The state/task '${run.name}' returned a result with a size exceeding the maximum number of bytes service limit.`,
    );
  }
}

/** JSONPath InputPath: the part of the raw input the state works on. */
export function inputPath(ctx: ExecutionContext, run: StateRun, raw: unknown): unknown {
  const p = run.st.InputPath;
  if (p === undefined || p === '$') return raw;
  if (p === null) return {};
  return requirePath(p as string, raw, ctx.pathEnv(run));
}

/** JSONPath OutputPath: the part of the state's output passed on. */
export function outputPath(ctx: ExecutionContext, run: StateRun, v: unknown): unknown {
  const p = run.st.OutputPath;
  if (p === undefined || p === '$') return v;
  if (p === null) return {};
  return requirePath(p as string, v, ctx.pathEnv(run));
}

/** JSONPath ResultPath (the state's, or a catcher's): where the result goes in the raw input. */
export function resultPath(raw: unknown, result: unknown, p: unknown): unknown {
  if (p === undefined || p === '$') return result;
  if (p === null) return raw;
  try {
    return setAtPath(raw, compilePath(p as string), result);
  } catch (e) {
    throw new RuntimeFailure('States.Runtime', `Invalid path '${String(p)}' : ${(e as Error).message}`);
  }
}

/** JSONPath Parameters (or a Task's, Parallel's input): the effective input after InputPath. */
export function parameters(ctx: ExecutionContext, run: StateRun, raw: unknown): unknown {
  const eff = inputPath(ctx, run, raw);
  return run.st.Parameters !== undefined ? evaluatePayloadTemplate(run.st.Parameters, eff, ctx.pathEnv(run)) : eff;
}

/** JSONata Arguments: the effective input of a Task or Parallel state. */
export function jsonataArguments(ctx: ExecutionContext, run: StateRun, raw: unknown): Promise<unknown> | unknown {
  return run.st.Arguments !== undefined ? evalTemplate(run.st.Arguments, 'Arguments', ctx.bindings(run, raw)) : raw;
}

/** JSONPath Assign: `.$` fields resolve against `value` (the state's result, or the error output in a catcher). */
export function assignPath(ctx: ExecutionContext, run: StateRun, tpl: unknown, value: unknown): Obj | undefined {
  if (tpl === undefined || tpl === null) return undefined;
  return evaluatePayloadTemplate(tpl, value, ctx.pathEnv(run)) as Obj;
}

/** JSONata Assign: evaluated against `$states.input` (plus `$states.result` / `$states.errorOutput` when given). */
export async function assignJsonata(
  ctx: ExecutionContext,
  run: StateRun,
  tpl: unknown,
  raw: unknown,
  extra?: Obj,
): Promise<Obj | undefined> {
  if (tpl === undefined || tpl === null) return undefined;
  return (await evalTemplate(tpl, 'Assign', ctx.bindings(run, raw, extra))) as Obj;
}

/**
 * The JSONata tail of every state that has one: Assign, then Output (or `fallback`), then exit.
 * `holder` carries the Assign and Output fields (the state, a matched Choice rule, a catcher).
 */
export async function jsonataExit(
  ctx: ExecutionContext,
  run: StateRun,
  holder: Obj,
  raw: unknown,
  fallback: unknown,
  next: string | undefined,
  extra?: Obj,
): Promise<StepResult> {
  const b = ctx.bindings(run, raw, extra);
  const assigned = await assignJsonata(ctx, run, holder.Assign, raw, extra);
  const output = holder.Output !== undefined ? await evalTemplate(holder.Output, 'Output', b) : fallback;
  ctx.exit(run, output, assigned);
  return { output, next };
}

/** The Next of a state that ends nowhere else (undefined when it is an End state). */
export function nextOf(run: StateRun): string | undefined {
  return run.st.End === true ? undefined : (run.st.Next as string | undefined);
}

/** The tail of Task, Map and Parallel: ResultSelector, Assign, ResultPath, OutputPath (or JSONata Assign and Output). */
export function finish(ctx: ExecutionContext, run: StateRun, raw: unknown, result: unknown): StepResult | Promise<StepResult> {
  const st = run.st;
  if (run.ql === 'JSONata') return jsonataExit(ctx, run, st, raw, result, nextOf(run), { result });
  const r = st.ResultSelector !== undefined ? evaluatePayloadTemplate(st.ResultSelector, result, ctx.pathEnv(run)) : result;
  const assigned = assignPath(ctx, run, st.Assign, r);
  const output = outputPath(ctx, run, resultPath(raw, r, st.ResultPath));
  ctx.exit(run, output, assigned);
  return { output, next: nextOf(run) };
}
