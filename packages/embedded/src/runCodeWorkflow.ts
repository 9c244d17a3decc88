import { createHash } from 'node:crypto';
import { CODE_CALL_SITE, codeToIr, compileIr, isStepforgeError, StepforgeError, type CodeWorkflowValue } from '@stepforge/compiler';
import { forgetLiveWorkflow, idempotencyKeyError, registerLiveWorkflow } from '@stepforge/contract';
import { openStack, type EmbeddedStack } from './EmbeddedStack.js';
import { EmbeddedRunService } from './RunService.js';
import type { RunRecordView } from './functionsRuntime.js';

/** What `.run()` passes besides the input: a state graph's start node and maxIterations, and Stepforge's idempotencyKey. */
export interface CodeRunOptions {
  readonly start?: string;
  readonly maxIterations?: number;
  readonly idempotencyKey?: string;
}

// One in-memory stack for the program's runs at a time, opened by the first and closed after the
// last settles, so a program that calls .run() ends when its work does.
let shared: Promise<{ stack: EmbeddedStack; service: EmbeddedRunService }> | undefined;
let users = 0;

async function acquire(): Promise<{ stack: EmbeddedStack; service: EmbeddedRunService }> {
  users++;
  shared ??= (async () => {
    const env = { ...process.env, STEPFORGE_LOG_LEVEL: process.env.STEPFORGE_LOG_LEVEL ?? 'SILENT' };
    const stack = await openStack({ projectDir: process.cwd(), inMemory: true, env });
    return { stack, service: new EmbeddedRunService(stack, process.cwd(), env) };
  })();
  try {
    return await shared;
  } catch (e) {
    users--;
    shared = undefined;
    throw e;
  }
}

async function release(): Promise<void> {
  if (--users > 0 || shared === undefined) return;
  const s = shared;
  shared = undefined;
  await (await s).stack.close();
}

/**
 * `.run()` of an agent SDK workflow in a user's program: compiles the program's own workflow value
 * (its functions stay in this process; see liveWorkflows), runs it on an embedded in-memory stack,
 * and resolves to its result (`{output, steps, stoppedEarly}`, `{results, fulfilled, rejected}` or
 * `{state, steps, iterations, terminatedBy}`). A failed run rejects with an Error named after the
 * run's error (ParallelAllFailed, UnknownNode, NodeError, …).
 */
export async function runCodeWorkflow(value: CodeWorkflowValue, input: unknown, options: CodeRunOptions = {}): Promise<unknown> {
  if (options.idempotencyKey !== undefined) return runKeyed(value, input, options, options.idempotencyKey);
  const module = registerLiveWorkflow(value);
  try {
    const compiled = compileIr(codeToIr(value, { module, exportName: value.kind, file: `${value.kind}.run()`, ...graphOptions(options) }));
    const { service } = await acquire();
    try {
      const { entry } = await service.catalog.registerText('', `${value.kind}.run()`, { compiled });
      // A workflow's input may be any value (often text): the run carries it as {"input": …}.
      const runInput = value.kind === 'stateGraph' ? input : { input };
      const { run } = await service.start(entry, runInput);
      const done = await service.wait(run.runId);
      if (done.status !== 'SUCCEEDED') {
        const e = new Error(done.error?.message ?? `the run ended ${done.status}`);
        e.name = done.error?.name ?? done.status;
        throw Object.assign(e, { code: e.name, runId: run.runId });
      }
      return done.output;
    } finally {
      await release();
    }
  } catch (e) {
    // A compile or input error reaches the program as an Error named by its class (invalid_workflow, invalid_input).
    if (isStepforgeError(e)) throw Object.assign(new Error(e.message), { name: e.code, code: e.code });
    throw e;
  } finally {
    forgetLiveWorkflow(module);
  }
}

/** A state graph's run options, without Stepforge's own. */
function graphOptions(options: CodeRunOptions): { start?: string; maxIterations?: number } {
  return {
    ...(options.start !== undefined ? { start: options.start } : {}),
    ...(options.maxIterations !== undefined ? { maxIterations: options.maxIterations } : {}),
  };
}

/** A UUID-shaped id from text: the same text, the same id. */
function derivedId(text: string): string {
  const h = createHash('sha256').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const ENDED_BADLY = new Set(['FAILED', 'TIMED_OUT', 'ABORTED']);

/**
 * `.run(input, {idempotencyKey})`: on the project's stack (`.stepforge/` in the working directory),
 * which this program must own, since the handlers that call its functions run where the stack is
 * (`stack_in_use` when another process, `stepforge serve` say, holds it). The workflow is named
 * after its structure and where the program built it, and its functions are found under that name,
 * so a later run of the program finds the run the key names. A run that succeeded answers its
 * result; one that ended badly is retried (`runs retry`, reusing the committed node results), each
 * retry under an id derived from the key and the run it retries, so that a later run of the
 * program goes on from the last retry rather than from the first failure.
 */
async function runKeyed(value: CodeWorkflowValue, input: unknown, options: CodeRunOptions, key: string): Promise<unknown> {
  const bad = idempotencyKeyError(key);
  if (bad !== undefined)
    throw Object.assign(new Error(`idempotencyKey: ${bad}`), { name: 'invalid_idempotency_key', code: 'invalid_idempotency_key' });
  const shape = codeToIr(value, { module: 'stepforge-live:', exportName: value.kind, ...graphOptions(options) }).workflow.steps[0]!
    .identity;
  const site = (value as unknown as Record<symbol, unknown>)[CODE_CALL_SITE];
  const id = createHash('sha256')
    .update(`${shape}\n${String(site ?? '')}`)
    .digest('hex')
    .slice(0, 16);
  // Where the program built it, in the compiled workflow: `stepforge runs retry` of this run, in
  // another process after the program exited, loads the workflow again from there.
  const module = registerLiveWorkflow(value, id, typeof site === 'string' && isFileSite(site) ? site : undefined);
  const env = { ...process.env, STEPFORGE_LOG_LEVEL: process.env.STEPFORGE_LOG_LEVEL ?? 'SILENT' };
  let stack: EmbeddedStack | undefined;
  try {
    const exportName = `${value.kind}-${id.slice(0, 8)}`;
    const compiled = compileIr(codeToIr(value, { module, exportName, file: `${value.kind}.run()`, ...graphOptions(options) }));
    stack = await openStack({ projectDir: process.cwd(), env });
    if (!stack.owner) {
      throw new StepforgeError(
        'stack_in_use',
        "another stepforge process holds this project's stack: a .run() with an idempotencyKey runs its functions in this program, so it needs the stack to itself",
        {
          hint: 'stop that process (stepforge serve, a run), or call .run() without an idempotencyKey (an in-memory stack of its own)',
        },
      );
    }
    const service = new EmbeddedRunService(stack, process.cwd(), env);
    const { entry } = await service.catalog.registerText('', `${value.kind}.run()`, { compiled });
    const runInput = value.kind === 'stateGraph' ? input : { input };
    const { run, reused } = await service.start(entry, runInput, { idempotencyKey: key });
    let done: RunRecordView = await service.wait(run.runId);
    // A run this call started answers as it ended; one an earlier call started is retried when it
    // ended badly, following the retries earlier calls made to the last one.
    while (reused && ENDED_BADLY.has(done.status)) {
      const retryId = derivedId(`${key}\n${done.runId}`);
      const earlier = await service
        .getRun(retryId)
        .catch((e: unknown) => ((e as { code?: string }).code === 'unknown_run' ? undefined : Promise.reject(e)));
      if (earlier !== undefined) {
        done = await service.wait(retryId);
        continue;
      }
      const retried = await service.retry(done.runId, { runId: retryId });
      done = await service.wait(retried.run.runId);
      break;
    }
    if (done.status !== 'SUCCEEDED') {
      const e = new Error(done.error?.message ?? `the run ended ${done.status}`);
      e.name = done.error?.name ?? done.status;
      throw Object.assign(e, { code: e.name, runId: done.runId });
    }
    return await service.readableOutput(done.output ?? null);
  } catch (e) {
    if (isStepforgeError(e)) throw Object.assign(new Error(e.message), { name: e.code, code: e.code });
    throw e;
  } finally {
    await stack?.close();
    forgetLiveWorkflow(module);
  }
}

/** A call site in a file (`file:///…/prog.mjs:12:20`, `/…/prog.mjs:12:20`), not in eval'd code or Node's own. */
function isFileSite(site: string): boolean {
  return /^(file:\/\/|\/).+:\d+:\d+$/.test(site);
}
