import { codeToIr, compileIr, isStepforgeError, type CodeWorkflowValue } from '@stepforge/compiler';
import { forgetLiveWorkflow, registerLiveWorkflow } from '@stepforge/contract';
import { openStack, type EmbeddedStack } from './EmbeddedStack.js';
import { EmbeddedRunService } from './RunService.js';

/** What `.run()` passes besides the input: a state graph's start node and maxIterations. */
export interface CodeRunOptions {
  readonly start?: string;
  readonly maxIterations?: number;
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
  const module = registerLiveWorkflow(value);
  try {
    const compiled = compileIr(codeToIr(value, { module, exportName: value.kind, file: `${value.kind}.run()`, ...options }));
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
