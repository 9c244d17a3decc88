// Parallel: runs every branch on the same input, concurrently; the output is the branches' outputs in order.
import { Scope } from '../Scope.js';
import { finish, jsonataArguments, parameters } from '../stateIo.js';
import { Aborted, type ExecutionContext, type Frame, type Obj, type StateRun, type StepResult, type Thread } from '../ExecutionContext.js';
import type { QueryLanguage } from '../types.js';

/** One attempt of a Parallel state (Retry and Catch wrap it). */
export async function runParallel(ctx: ExecutionContext, run: StateRun, raw: unknown): Promise<StepResult> {
  const st = run.st;
  const eff = run.ql === 'JSONata' ? await jsonataArguments(ctx, run, raw) : parameters(ctx, run, raw);
  const outer = run.frame.thread;
  const startedId = ctx.emit(outer, 'ParallelStateStarted');
  const branches = (st.Branches as Obj[]) ?? [];
  const ac = new AbortController();
  const onOuter = () => ac.abort(run.frame.signal.reason);
  run.frame.signal.addEventListener('abort', onOuter, { once: true });
  const results = new Array<unknown>(branches.length);
  let failure: unknown;
  let failedThread: Thread | undefined;
  let lastThread: Thread | undefined;
  await Promise.all(
    branches.map(async (b, i) => {
      const thread: Thread = { prev: startedId };
      const frame: Frame = {
        scope: new Scope(run.frame.scope),
        thread,
        signal: ac.signal,
        ql: (b.QueryLanguage as QueryLanguage | undefined) ?? run.ql,
        top: false,
        parallelBranch: true,
      };
      try {
        results[i] = await ctx.runStates(b, b.StartAt as string, eff, frame);
        lastThread = thread;
      } catch (e) {
        if (failure === undefined && !(e instanceof Aborted)) {
          failure = e;
          failedThread = thread;
          ac.abort();
        } else if (failure === undefined && run.frame.signal.aborted) {
          failure = e;
        }
      }
    }),
  );
  run.frame.signal.removeEventListener('abort', onOuter);
  if (failure !== undefined) {
    if (failedThread) outer.prev = failedThread.prev;
    throw failure;
  }
  if (lastThread) outer.prev = lastThread.prev;
  ctx.emit(outer, 'ParallelStateSucceeded', undefined, false);
  return finish(ctx, run, raw, results);
}
