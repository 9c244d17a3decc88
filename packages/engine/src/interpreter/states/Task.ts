// Task: calls its resource through the execution's invoker, with TimeoutSeconds and
// HeartbeatSeconds timers, and records the Lambda or service events AWS writes.
import { jsonataBody } from '../../jsonata/JsonataEvaluator.js';
import { evalTemplate } from '../jsonataFields.js';
import { requirePath } from '../pathEnv.js';
import { RuntimeFailure } from '../StateError.js';
import { finish, inputPath, jsonataArguments, parameters } from '../stateIo.js';
import { TaskFailure, toFailure } from '../TaskFailure.js';
import {
  Aborted,
  MAX_PAYLOAD_BYTES,
  NOT_TRUNCATED,
  TIMERS_DONE,
  json,
  typeName,
  type ExecutionContext,
  type Obj,
  type StateRun,
  type StepResult,
} from '../ExecutionContext.js';

/** `arn:aws:states:::lambda:invoke(.waitForTaskToken)` → {resourceType: lambda, resource: invoke(.waitForTaskToken)}; undefined for function ARNs. */
export function serviceOf(resource: string): { resourceType: string; resource: string } | undefined {
  const m = /^arn:[^:]+:states:[^:]*:[^:]*:([^:]+):(.+)$/.exec(resource);
  if (!m) return undefined;
  const [, service, action] = m;
  if (service === 'activity') return undefined;
  // arn:aws:states:::aws-sdk:dynamodb:putItem → resourceType "aws-sdk:dynamodb", resource "putItem".
  if (service === 'aws-sdk') {
    const i = action!.indexOf(':');
    if (i > 0) return { resourceType: `aws-sdk:${action!.slice(0, i)}`, resource: action!.slice(i + 1) };
  }
  return { resourceType: service!, resource: action! };
}

/** TimeoutSeconds / HeartbeatSeconds: a number, a `…Path` to a positive integer, or a JSONata expression. */
async function secondsField(ctx: ExecutionContext, run: StateRun, raw: unknown, field: string): Promise<number | undefined> {
  const v = run.st[field];
  if (run.ql === 'JSONata' && jsonataBody(v) !== undefined) {
    const n = await evalTemplate(v, field, ctx.bindings(run, raw));
    if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0) {
      throw new RuntimeFailure(
        'States.QueryEvaluationError',
        `The JSONata expression '${jsonataBody(v)}' specified for the field '${field}' returned an unexpected result type. Expected 'integer', but was '${typeName(n)}' for value: ${json(n)}`,
        field,
      );
    }
    return n;
  }
  if (typeof v === 'number') return v;
  const p = run.st[`${field}Path`];
  if (typeof p === 'string') {
    const n = requirePath(p, inputPath(ctx, run, raw), ctx.pathEnv(run));
    if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0) {
      throw new RuntimeFailure('States.Runtime', `The ${field}Path parameter does not reference a positive integer: ${p} == ${json(n)}`);
    }
    return n;
  }
  return undefined;
}

/** One attempt of a Task state (Retry and Catch wrap it). */
export async function runTask(ctx: ExecutionContext, run: StateRun, raw: unknown): Promise<StepResult> {
  const st = run.st;
  const resource = st.Resource as string;
  if (resource.endsWith('.waitForTaskToken')) run.taskToken = ctx.newTaskToken();
  const eff = run.ql === 'JSONata' ? await jsonataArguments(ctx, run, raw) : parameters(ctx, run, raw);
  const timeoutSeconds = await secondsField(ctx, run, raw, 'TimeoutSeconds');
  const heartbeatSeconds = await secondsField(ctx, run, raw, 'HeartbeatSeconds');
  const svc = serviceOf(resource);
  const thread = run.frame.thread;
  const effText = json(eff);
  if (svc) {
    const d: Obj = { parameters: effText, region: ctx.region, resource: svc.resource, resourceType: svc.resourceType };
    if (timeoutSeconds !== undefined) d.timeoutInSeconds = timeoutSeconds;
    if (heartbeatSeconds !== undefined) d.heartbeatInSeconds = heartbeatSeconds;
    ctx.emit(thread, 'TaskScheduled', d);
    ctx.emit(thread, 'TaskStarted', { resource: svc.resource, resourceType: svc.resourceType });
  } else {
    const d: Obj = { input: effText, inputDetails: NOT_TRUNCATED, resource };
    if (timeoutSeconds !== undefined) d.timeoutInSeconds = timeoutSeconds;
    ctx.emit(thread, 'LambdaFunctionScheduled', d);
    ctx.emit(thread, 'LambdaFunctionStarted');
  }
  const ac = new AbortController();
  // One listener on the (possibly shared) outer signal, removed when the task settles.
  let rejectAbort!: (e: unknown) => void;
  const abortP = new Promise<never>((_, reject) => {
    rejectAbort = reject;
  });
  abortP.catch(() => {});
  const onOuter = () => {
    ac.abort();
    rejectAbort(new Aborted());
  };
  if (run.frame.signal.aborted) onOuter();
  else run.frame.signal.addEventListener('abort', onOuter, { once: true });
  const clock = ctx.clock;
  let lastBeat = clock.now();
  const timers: Promise<never>[] = [];
  // Only a task with a timeout or a heartbeat has timers to cancel when it settles.
  const timerAbort = timeoutSeconds !== undefined || heartbeatSeconds !== undefined ? new AbortController() : undefined;
  if (timerAbort && timeoutSeconds !== undefined) {
    timers.push(
      clock.sleep(timeoutSeconds * 1000, timerAbort.signal).then(() => {
        throw new TaskFailure('States.Timeout');
      }),
    );
  }
  if (timerAbort && heartbeatSeconds !== undefined) {
    const hbMs = heartbeatSeconds * 1000;
    timers.push(
      (async () => {
        for (;;) {
          await clock.sleep(Math.max(1, lastBeat + hbMs - clock.now()), timerAbort.signal);
          if (timerAbort.signal.aborted) return new Promise<never>(() => {});
          if (clock.now() - lastBeat >= hbMs) throw new TaskFailure('States.HeartbeatTimeout');
        }
      })(),
    );
  }
  let result: unknown;
  try {
    const inv = ctx.invoker.invoke(
      {
        resource,
        input: eff,
        stateName: run.name,
        ...(run.taskToken !== undefined ? { taskToken: run.taskToken } : {}),
        ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
        ...(heartbeatSeconds !== undefined ? { heartbeatSeconds } : {}),
        signal: ac.signal,
        context: ctx.context(run),
        ...(st.Credentials !== undefined ? { credentials: st.Credentials } : {}),
        queryLanguage: run.ql,
      },
      {
        heartbeat: () => {
          lastBeat = clock.now();
        },
        emit: (e) => {
          const { type, ...rest } = e;
          const keys = Object.keys(rest);
          ctx.emit(thread, type, keys.length === 1 ? (rest[keys[0]!] as Obj) : undefined);
        },
      },
    );
    result = await Promise.race([inv, abortP, ...timers]);
  } catch (e) {
    timerAbort?.abort(TIMERS_DONE);
    ac.abort();
    run.frame.signal.removeEventListener('abort', onOuter);
    if (e instanceof Aborted) throw e;
    throw taskFailed(ctx, run, svc, e);
  }
  timerAbort?.abort(TIMERS_DONE);
  run.frame.signal.removeEventListener('abort', onOuter);
  const outText = json(result);
  if (outText.length * 3 > MAX_PAYLOAD_BYTES && Buffer.byteLength(outText) > MAX_PAYLOAD_BYTES) {
    const f = new TaskFailure(
      'States.DataLimitExceeded',
      `The state/task '${svc ? svc.resourceType : resource}' returned a result with a size exceeding the maximum number of bytes service limit.`,
    );
    if (svc) ctx.emit(thread, 'TaskFailed', { error: f.error, cause: f.cause, resource: svc.resource, resourceType: svc.resourceType });
    else ctx.emit(thread, 'LambdaFunctionFailed', { error: f.error, cause: f.cause });
    throw f;
  }
  if (svc)
    ctx.emit(thread, 'TaskSucceeded', {
      output: outText,
      outputDetails: NOT_TRUNCATED,
      resource: svc.resource,
      resourceType: svc.resourceType,
    });
  else ctx.emit(thread, 'LambdaFunctionSucceeded', { output: outText, outputDetails: NOT_TRUNCATED });
  return finish(ctx, run, raw, result);
}

/** Records the task's failure (or time-out) event and returns the failure Retry and Catch see. */
function taskFailed(ctx: ExecutionContext, run: StateRun, svc: ReturnType<typeof serviceOf>, e: unknown): TaskFailure {
  const f = toFailure(e);
  // SendTaskFailure without error/cause: AWS records null Error/Cause.
  const nullError = (e as TaskFailure).nullError === true;
  const nullCause = (e as TaskFailure).nullCause === true;
  const timedOut = f.error === 'States.Timeout' || f.error === 'States.HeartbeatTimeout';
  const d: Obj = svc ? { resource: svc.resource, resourceType: svc.resourceType } : {};
  if (!nullError) d.error = f.error;
  if (f.cause !== undefined && !nullCause) d.cause = f.cause;
  if (svc) ctx.emit(run.frame.thread, timedOut ? 'TaskTimedOut' : 'TaskFailed', d);
  else ctx.emit(run.frame.thread, timedOut ? 'LambdaFunctionTimedOut' : 'LambdaFunctionFailed', d);
  const failure = new TaskFailure(f.error, f.cause);
  if (nullError) failure.nullError = true;
  if (nullCause) failure.nullCause = true;
  return failure;
}
