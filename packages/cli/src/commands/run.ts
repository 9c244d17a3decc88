import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { errorsOf, idempotencyKeyError, isStepforgeError, type StepforgeError } from '@stepforge/contract';
import type { CompileResult } from '@stepforge/compiler';
import { reportErrors } from './documentIo.js';
import { parseCommandArgs } from './parseCommandArgs.js';
import { readableCause, type StepProgress } from '@stepforge/runtime';
import { EXIT_FAILURE, EXIT_OK, UsageError, type CliIo } from '../CliIo.js';
import { ProgressDisplay, formatMs, truncate } from '../progress/ProgressDisplay.js';
import {
  type OpenStackOptions,
  loadFunctionsRuntime,
  describePolicy,
  resolvePolicy,
  StackSession,
  type EmbeddedRunService,
  type RunRecordView,
  type WorkflowEntry,
} from '@stepforge/embedded';
import { readInput } from '../readInput.js';
import { checkSecretsFile } from './checkSecretsFile.js';
import type { Command } from './registry.js';
import { COMMAND_TEXT } from './commandText.js';

const PROVIDERS = ['local', 'bedrock', 'openai'] as const;

/** Parses the shared `--in-memory` / `--provider` style options of stack commands. */
export function stackOptions(io: CliIo, values: { provider?: string | undefined; 'in-memory'?: boolean | undefined }): OpenStackOptions {
  const provider = values.provider;
  if (provider !== undefined && !(PROVIDERS as readonly string[]).includes(provider)) {
    throw new UsageError(`--provider must be one of ${PROVIDERS.join(', ')}, got '${provider}'`);
  }
  return {
    projectDir: io.cwd,
    env: io.env,
    ...(values['in-memory'] ? { inMemory: true } : {}),
    ...(provider !== undefined ? { provider: provider as (typeof PROVIDERS)[number] } : {}),
  };
}

const { summary: SUMMARY, usage: USAGE } = COMMAND_TEXT.run;

/** `--var NAME=VALUE` flags over the environment: the values of `{{var:NAME}}` macros. */
export function macroVars(flags: readonly string[] | undefined, env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) vars[k] = v;
  for (const f of flags ?? []) {
    const eq = f.indexOf('=');
    if (eq <= 0) throw new UsageError(`--var takes NAME=VALUE, got '${f}'\nUsage: stepforge ${USAGE}`);
    vars[f.slice(0, eq)] = f.slice(eq + 1);
  }
  return vars;
}

const command: Command = {
  name: 'run',
  summary: SUMMARY,
  usage: USAGE,
  async run(argv, io) {
    const parsed = parseCommandArgs(
      argv,
      {
        input: { type: 'string' },
        chain: { type: 'string' },
        var: { type: 'string', multiple: true },
        'idempotency-key': { type: 'string' },
        export: { type: 'string' },
        provider: { type: 'string' },
        json: { type: 'boolean', default: false },
        'in-memory': { type: 'boolean', default: false },
      },
      USAGE,
    );
    const { values, positionals } = parsed;
    // `--chain FILE` is how Contenox users name the chain (`contenox run --chain ./review.json`).
    if (values.chain !== undefined) positionals.unshift(values.chain);
    if (positionals.length !== 1)
      throw new UsageError(
        `run takes one FILE, got ${positionals.length === 0 ? 'none' : positionals.join(' ')}\nUsage: stepforge ${USAGE}`,
      );
    const vars = macroVars(values.var, io.env);
    const keyError = values['idempotency-key'] !== undefined ? idempotencyKeyError(values['idempotency-key']) : undefined;
    if (keyError !== undefined) throw new UsageError(`--idempotency-key: ${keyError}`);
    const input = readInput(values.input, io.cwd, io.stdin, io.stdinPiped);
    // A policy that cannot be read refuses the run before the stack opens: opening it would start
    // (or join) a stack and show other runs' lines for a run that never starts. The stack reads the
    // policy again when it registers the workflow.
    const fr = await loadFunctionsRuntime();
    resolvePolicy(fr, { file: positionals[0]!, baseDir: io.cwd, env: io.env });
    checkSecretsFile(fr, readDocumentText(resolve(io.cwd, positionals[0]!)), io.cwd, io.env);
    const registerOptions = { vars, requireMacros: true, ...(values.export !== undefined ? { exportName: values.export as string } : {}) };
    // The document's own errors are printed all at once, as validate prints them; a stack's failure, or a
    // file that cannot be read, is not one of them (and is printed alone, as validate prints it too).
    let documentError: StepforgeError | undefined;
    let opened: Awaited<ReturnType<typeof compileWhileStackOpens<{ text: string; compiled: CompileResult }>>>;
    try {
      opened = await compileWhileStackOpens(stackOptions(io, values), () =>
        import('@stepforge/embedded')
          .then(({ compileWorkflowFile }) => compileWorkflowFile(io.cwd, positionals[0]!, registerOptions))
          .catch((e: unknown) => {
            if (isStepforgeError(e) && e.code !== 'file_not_found') documentError = e;
            throw e;
          }),
      );
    } catch (e) {
      if (documentError !== undefined && e === documentError) return reportErrors(io, errorsOf(documentError), values.json === true);
      throw e;
    }
    const { compiled, session } = opened;
    try {
      if (!session.stack.owner && values.provider !== undefined) {
        io.err(
          `warning: --provider ${values.provider} is ignored: the running stack (pid in .stepforge/stack.json) runs the handlers with its own provider\n`,
        );
      }
      const key = values['idempotency-key'];
      // Chosen here so that starting again on a stack taken over finds this run (StackSession).
      const runId = randomUUID();
      let announced = false;
      const { entry, started } = await session.untilDone(io, async ({ service: s }) => {
        const { entry: e } = await s.catalog.registerFile(positionals[0]!, { ...registerOptions, compiled });
        // Which policy gates this run's tool calls, before it starts; on stderr with --json, whose stdout is one JSON value.
        if (!announced && e.policy) (values.json ? io.err : io.out)(`${describePolicy(e.policy, io.cwd)}\n`);
        announced = true;
        return { entry: e, started: await s.start(e, input, { runId, ...(key !== undefined ? { idempotencyKey: key } : {}) }) };
      });
      if (started.inputDiffers) {
        io.err(
          `note: idempotency key '${key}' was first used with another input; this is that run (${started.run.runId}), as it ran then\n`,
        );
      }
      const run = await session.untilDone(io, ({ service: s }, again) =>
        values.json ? s.wait(started.run.runId) : follow(io, s, entry, started.run, started.reused, again),
      );
      if (values.json) {
        const output = await session.untilDone(io, ({ service: s }) => s.readableOutput(run.output ?? null));
        io.out(JSON.stringify({ runId: run.runId, status: run.status, output, reused: started.reused }) + '\n');
      }
      return run.status === 'SUCCEEDED' ? EXIT_OK : EXIT_FAILURE;
    } finally {
      await session.close();
    }
  },
};
export default command;

/**
 * Compiles the workflow (`compile`) and opens the stack. A project that has its `.stepforge/`
 * already (every run after the first), or a run in memory, starts opening the stack first and
 * compiles while the dynalite worker opens the store: LevelDB's open is disk work on the worker's
 * side (it writes the previous log out as a table and a new manifest, each flushed), and the main
 * thread only waits for it, about as long as the compile takes. A project without one is compiled
 * first, so that a workflow refused at compile time creates no `.stepforge/`. A compile error is
 * the command's error either way: the stack opened meanwhile is closed first (its own failure to
 * open, if any, is not reported).
 */
async function compileWhileStackOpens<T>(options: OpenStackOptions, compile: () => Promise<T>): Promise<T & { session: StackSession }> {
  if (!options.inMemory && !existsSync(join(options.projectDir, '.stepforge'))) {
    const compiled = await compile();
    return { ...compiled, session: await StackSession.open(options) };
  }
  const opening = StackSession.open(options);
  // Handled below in every path; without this, a failure while the compile runs would be reported
  // as an unhandled rejection first.
  opening.catch(() => undefined);
  // One turn of the event loop: the stack's modules load and it posts the store's opening to the
  // worker before the compile takes the thread.
  await new Promise<void>((r) => setImmediate(r));
  let compiled: T;
  try {
    compiled = await compile();
  } catch (e) {
    await opening.then(
      (s) => s.close(),
      () => undefined,
    );
    throw e;
  }
  return { ...compiled, session: await opening };
}

/** The document's text for the checks before the stack opens; '' when it cannot be read (registering it reports why). */
function readDocumentText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/**
 * Shows live progress until the run ends, then the result; returns the settled run. `continued`:
 * the run started earlier and is followed from where it is (after an approval).
 */
export async function follow(
  io: CliIo,
  service: EmbeddedRunService,
  entry: WorkflowEntry,
  run: RunRecordView,
  reused: boolean,
  continued = false,
): Promise<RunRecordView> {
  // A reused run that had not ended (its process stopped mid-run) goes on here: its unfinished
  // steps run now, so this is no replay of a stored result. What had finished is noted first, to
  // say at the end what ran now and what was reused.
  const resumed = reused && run.status === 'RUNNING';
  const finishedBefore = resumed ? finishedSteps((await service.progress(run, entry)).steps) : new Set<string>();
  const display = new ProgressDisplay((t) => io.out(t), io.isTTY, reused && !resumed);
  if (resumed) {
    io.out(
      `run ${run.runId} (${entry.displayName ?? entry.name}) reused: idempotency key '${run.idempotencyKey}' names this run, which had not finished; it goes on here (${count(finishedBefore.size, 'step')} finished before, kept)\n`,
    );
  } else if (reused) {
    io.out(
      `run ${run.runId} (${entry.displayName ?? entry.name}) reused: idempotency key '${run.idempotencyKey}' already ran; showing its stored result, nothing ran again\n`,
    );
  } else if (continued) {
    io.out(`run ${run.runId} (${entry.displayName ?? entry.name}) continues\n`);
  } else {
    io.out(`run ${run.runId} (${entry.displayName ?? entry.name}) started${run.parentRunId ? ` as a fork of ${run.parentRunId}` : ''}\n`);
  }
  const done = service.wait(run.runId);
  let finished: RunRecordView | undefined;
  void done.then(
    (r) => {
      finished = r;
    },
    () => undefined,
  );
  const announced = new Set<string>();
  let lastApprovalCheck = 0;
  while (!finished && (!reused || resumed)) {
    const { steps } = await service.progress(run, entry);
    display.update(steps);
    if (Date.now() - lastApprovalCheck > 300 && steps.some((s) => s.state === 'running')) {
      lastApprovalCheck = Date.now();
      // The store's list: this run is running, so the check of ended runs listApprovals adds is not needed.
      for (const a of await service.stack.runtime.approvals.list('PENDING')) {
        if (a.runId !== run.runId || announced.has(a.approvalId)) continue;
        announced.add(a.approvalId);
        io.out(`  ⏸ step ${a.stepId} waits for approval of ${a.tool}: stepforge approvals approve ${a.approvalId}  (or reject)\n`);
      }
    }
    await Promise.race([done.catch(() => undefined), new Promise((r) => setTimeout(r, io.isTTY ? 80 : 40))]);
  }
  const final = await done;
  const { steps } = await service.progress(final, entry);
  display.update(steps);
  const took = final.endedAt ? Date.parse(final.endedAt) - Date.parse(final.startedAt) : undefined;
  const tokens = steps.reduce((n, s) => n + s.inputTokens + s.outputTokens, 0);
  io.out(
    `\n${final.status}${reused && !resumed ? ' (reused)' : ''}  run ${final.runId}${took !== undefined ? `  ${formatMs(took)}` : ''}${tokens > 0 ? `  ${tokens} tokens` : ''}\n`,
  );
  if (resumed) {
    const ranNow = steps
      .filter((s) => s.parent === undefined && !finishedBefore.has(s.id) && (s.state === 'succeeded' || s.state === 'failed'))
      .map((s) => s.id);
    const kept = steps.filter((s) => finishedBefore.has(s.id)).map((s) => s.id);
    io.out(
      `ran now: ${ranNow.length > 0 ? ranNow.join(', ') : 'nothing'}; reused from before: ${kept.length > 0 ? kept.join(', ') : 'nothing'}\n`,
    );
  }
  if (final.status === 'SUCCEEDED') {
    io.out(`output:\n${formatOutput(await service.readableOutput(final.output))}\n`);
  } else if (final.error) {
    io.out(`error: ${final.error.name}: ${truncate(readableCause(final.error.message), 400)}\n`);
    const unknown = (await service.runs.listSteps(final.runId)).filter(
      (r) => r.status === 'FAILED' && r.error?.name === 'StepOutcomeUnknown',
    );
    if (unknown.length > 0) {
      // A retry would call again what may have gone through (a message posted twice): the person
      // who checks the target says which it was.
      for (const r of unknown) {
        io.out(`  step ${r.stepId}'s call went out and its outcome is unknown: check the target first.\n`);
        io.out(
          `    if it went through, record its result, then go on: stepforge runs resolve ${final.runId} --step ${r.stepId} --output '<its result as JSON>'  and  stepforge runs retry ${final.runId}\n`,
        );
        io.out(`    if it did not, call it again: stepforge runs retry ${final.runId}\n`);
      }
    } else {
      io.out(`  retry the unfinished steps: stepforge runs retry ${final.runId}\n`);
    }
  }
  return final;
}

/** The top-level steps that have ended successfully (a nested step ends with its parent). */
function finishedSteps(steps: readonly StepProgress[]): Set<string> {
  return new Set(steps.filter((s) => s.parent === undefined && s.state === 'succeeded').map((s) => s.id));
}

/** `1 step`, `2 steps`. */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function formatOutput(v: unknown): string {
  if (typeof v === 'string') return v;
  return JSON.stringify(v ?? null, null, 2);
}
