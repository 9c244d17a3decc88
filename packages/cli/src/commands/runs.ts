import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { errnoReason } from '@stepforge/embedded/project';
import { isStdinInput, readStdinText } from '../readInput.js';
import { parseCommandArgs } from './parseCommandArgs.js';
import { readableCause, answerRecord, recordlessOutput, recordsByStep, runDetailsJson, runSummary } from '@stepforge/runtime';
import { StepforgeError, workflowSlug } from '@stepforge/compiler';
import { EXIT_FAILURE, EXIT_OK, UsageError, type CliIo } from '../CliIo.js';
import { formatMs, formatStepLine, truncate } from '../progress/ProgressDisplay.js';
import { type RunDetails, type RunRecordView, StackSession, type RegisteredCatalog } from '@stepforge/embedded';
import { follow, stackOptions } from './run.js';
import type { Command } from './registry.js';
import { COMMAND_TEXT } from './commandText.js';

const STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'] as const;

const { summary: SUMMARY, usage: USAGE } = COMMAND_TEXT.runs;
/** Runs `runs list` shows unless told otherwise, and the most it shows. */
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 10_000;
/** What `runs cancel` records when no --reason is given (RunService.stop's default). */
const DEFAULT_CANCEL_REASON = 'cancelled by the user';
/** The longest --reason, as `POST /runs/{id}/cancel` takes it. */
const MAX_REASON_LENGTH = 2000;

const SUBCOMMANDS = ['list', 'show', 'retry', 'restart', 'cancel', 'resolve'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];
const isSubcommand = (s: string): s is Subcommand => (SUBCOMMANDS as readonly string[]).includes(s);

/** The flags that belong to one subcommand (--json and --in-memory go with every one). */
const SUBCOMMAND_FLAGS = ['workflow', 'status', 'limit', 'from', 'reason', 'step', 'output'] as const;
type SubcommandFlag = (typeof SUBCOMMAND_FLAGS)[number];
const SUBCOMMAND_OF_FLAG: Record<SubcommandFlag, Subcommand> = {
  workflow: 'list',
  status: 'list',
  limit: 'list',
  from: 'restart',
  reason: 'cancel',
  step: 'resolve',
  output: 'resolve',
};

const limitError = (given: string) => new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT}, got '${given}'`);

const quoteList = (args: readonly string[]) => args.map((a) => `'${a}'`).join(', ');

const command: Command = {
  name: 'runs',
  summary: SUMMARY,
  usage: USAGE,
  async run(argv, io) {
    const parsed = parseCommandArgs(
      argv,
      {
        workflow: { type: 'string' },
        status: { type: 'string' },
        from: { type: 'string' },
        reason: { type: 'string' },
        limit: { type: 'string' },
        step: { type: 'string' },
        output: { type: 'string' },
        json: { type: 'boolean', default: false },
        open: { type: 'boolean', default: false },
        'in-memory': { type: 'boolean', default: false },
      },
      USAGE,
    );
    const { values, positionals } = parsed;
    const [sub, ...args] = positionals;
    if (sub === undefined || !isSubcommand(sub)) {
      throw new UsageError(
        `runs needs one of list, show ID, retry ID, restart ID --from STEP, cancel ID, resolve ID --step S --output JSON${sub ? ` (got '${sub}')` : ''}`,
      );
    }
    // A stray argument is refused, never ignored: `runs list extra` may be a run id meant for show.
    if (sub === 'list' && args.length > 0) throw new UsageError(`runs list takes no arguments (got ${quoteList(args)})`);
    if (sub !== 'list' && args.length === 0) throw new UsageError(`runs ${sub} takes one run ID`);
    if (sub !== 'list' && args.length > 1) throw new UsageError(`runs ${sub} takes one run ID (got ${args.length}: ${quoteList(args)})`);
    const id = args[0];
    // A flag of another subcommand is refused, never ignored (`retry --from` would re-run other steps than meant).
    for (const flag of SUBCOMMAND_FLAGS) {
      if (values[flag] === undefined || SUBCOMMAND_OF_FLAG[flag] === sub) continue;
      if (flag === 'from' && sub === 'retry') {
        throw new UsageError(
          `--from goes with runs restart: runs retry re-runs only the steps that did not finish; to re-run from a step, use runs restart ${id} --from ${values.from}`,
        );
      }
      throw new UsageError(`--${flag} goes with runs ${SUBCOMMAND_OF_FLAG[flag]}`);
    }
    if (values.open && sub !== 'show') throw new UsageError('--open goes with runs show');
    if (sub === 'show' && values.open) {
      // The page is served by serve, which holds the stack: nothing is opened here.
      const { openRunPage } = await import('../view/openRunPage.js');
      await openRunPage(io, id!);
      return EXIT_OK;
    }
    if (sub === 'restart' && values.from === undefined) throw new UsageError('runs restart needs --from STEP');
    if (sub === 'resolve' && (values.step === undefined || values.output === undefined)) {
      throw new UsageError(
        `runs resolve needs --step S and --output JSON (the result the step's call gave, once you checked it went through)\nUsage: stepforge ${USAGE}`,
      );
    }
    const resolvedOutput = sub === 'resolve' ? readOutputFlag(values.output!, io) : undefined;
    if (values.reason !== undefined && values.reason.trim() === '') {
      throw new UsageError(
        `--reason cannot be empty: say why the run is cancelled, or leave --reason out to record '${DEFAULT_CANCEL_REASON}'`,
      );
    }
    if (values.reason !== undefined && values.reason.length > MAX_REASON_LENGTH) {
      throw new UsageError(`--reason is at most ${MAX_REASON_LENGTH} characters, got ${values.reason.length}`);
    }
    // Plain decimal digits only: Number() would also take '0x10', '1e2' and ' 2'.
    if (values.limit !== undefined && !(/^\d+$/.test(values.limit) && Number(values.limit) >= 1 && Number(values.limit) <= MAX_LIMIT))
      throw limitError(values.limit);
    const limit = values.limit === undefined ? DEFAULT_LIMIT : Number(values.limit);
    const status = values.status?.toUpperCase();
    if (status !== undefined && !(STATUSES as readonly string[]).includes(status)) {
      throw new UsageError(`--status must be one of ${STATUSES.join(', ')}, got '${values.status}'`);
    }
    // list and show only read (they never create a store, and resume nothing), and cancel ends a
    // run where it stands: a process that comes to hold the stack for it resumes nothing (a
    // cancelled run does not take another step first).
    const access =
      sub === 'list' || sub === 'show'
        ? { access: 'read' as const, resume: false }
        : sub === 'cancel' || sub === 'resolve'
          ? { resume: false }
          : {};
    const session = await StackSession.open({ ...stackOptions(io, values), ...access });
    try {
      const { service } = session;
      if (sub === 'list') {
        // A workflow is named by its display name or by its workflow name alike: the one is the other's slug.
        const workflow = values.workflow !== undefined ? workflowSlug(values.workflow) : undefined;
        const runs = await service.listRuns({
          ...(workflow !== undefined ? { workflow } : {}),
          ...(status !== undefined ? { status: status as RunRecordView['status'] } : {}),
          limit,
        });
        if (values.json) io.out(JSON.stringify({ runs: runs.map(runSummary) }) + '\n');
        else if (runs.length === 0 && values.workflow !== undefined) io.out(await noRunsOf(service.catalog, values.workflow, workflow!));
        else io.out(formatRunList(runs));
        return EXIT_OK;
      }
      if (sub === 'show') {
        const details = await service.readableDetails(id!);
        if (values.json) io.out(JSON.stringify(runDetailsJson(details)) + '\n');
        else io.out(formatDetails(details));
        return EXIT_OK;
      }
      if (sub === 'cancel') return await cancel(io, session, id!, values.reason, values.json === true);
      if (sub === 'resolve') {
        const r = await session.untilDone(io, ({ service: s }) => s.resolve(id!, values.step!, resolvedOutput));
        if (values.json) io.out(JSON.stringify({ runId: r.run.runId, stepId: r.stepId, status: 'SUCCEEDED', target: r.target }) + '\n');
        else {
          io.out(`resolved step ${r.stepId} of run ${r.run.runId}: its call to ${r.target} is recorded as done, with the output given\n`);
          io.out(`  go on from there (the step is not called again): stepforge runs retry ${r.run.runId}\n`);
        }
        return EXIT_OK;
      }
      // The fork's run id is chosen here, so that starting it again on a stack taken over finds it.
      const fork = { runId: randomUUID() };
      const started = await session.untilDone(io, ({ service: s }) =>
        sub === 'retry' ? s.retry(id!, fork) : s.restart(id!, values.from!, fork),
      );
      const entry = await session.service.catalog.forRun(started.run);
      if (!entry) throw new StepforgeError('unknown_workflow', `workflow '${started.run.workflow}' is not registered`);
      if (!values.json && 'rerun' in started)
        io.out(`restart from '${values.from}': re-running ${(started.rerun as string[]).join(', ')}; reusing the rest\n`);
      const run = await session.untilDone(io, ({ service: s }, again) =>
        values.json ? s.wait(started.run.runId) : follow(io, s, entry, started.run, false, again),
      );
      if (values.json)
        io.out(
          JSON.stringify({
            runId: run.runId,
            parentRunId: run.parentRunId ?? null,
            status: run.status,
            output: run.output ?? null,
            reused: false,
          }) + '\n',
        );
      return run.status === 'SUCCEEDED' ? EXIT_OK : EXIT_FAILURE;
    } finally {
      await session.close();
    }
  },
};
export default command;

/** `--output`: inline JSON, `@FILE` holding JSON, or `-` / `@-` for standard input. */
function readOutputFlag(raw: string, io: CliIo): unknown {
  let text = raw;
  let where = '--output';
  if (isStdinInput(raw)) {
    text = readStdinText(io.stdin, '--output');
    where = '<stdin>';
  } else if (raw.startsWith('@')) {
    where = raw.slice(1);
    if (where === '') throw new UsageError('--output @ needs a file name after the @, e.g. --output @result.json');
    try {
      text = readFileSync(isAbsolute(where) ? where : join(io.cwd, where), 'utf8').replace(/^\uFEFF/, '');
    } catch (e) {
      throw new StepforgeError(
        (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'file_not_found' : 'io',
        `cannot read output file ${where}: ${errnoReason(e)}`,
        {
          hint: "--output @FILE reads the step's result from FILE (JSON), relative to the current directory",
        },
      );
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new StepforgeError('invalid_output_json', `${where}: the step's output is not valid JSON: ${(e as Error).message}`, {
      hint: `give the result the call gave as JSON, e.g. --output '{"ok":true}' (a string is quoted: --output '"sent"')`,
    });
  }
}

/**
 * `runs cancel ID`: stops the run's execution (StopExecution, as `POST /runs/{id}/cancel` does) and
 * prints the run as it settled, ABORTED. A run that has already ended is left as it is and printed
 * with a note; that is not an error, as the run is not running either way.
 */
async function cancel(io: CliIo, session: StackSession, runId: string, reason: string | undefined, json: boolean): Promise<number> {
  // Whether this command found the run running (on a first attempt whose owner then ended, the
  // run may have settled ABORTED by the time a second one reads it).
  let cancelled = false;
  // Quiet: when the owner is the `run` following this run, stopping the run ends it, and the
  // second attempt reads the run as it settled.
  const run = await session.untilDone(
    io,
    async ({ service }) => {
      const found = await service.getRun(runId);
      if (found.status !== 'RUNNING') return found;
      cancelled = true;
      return service.stop(found, reason);
    },
    { quiet: true },
  );
  if (json) io.out(JSON.stringify({ runId: run.runId, status: run.status, cancelled, error: run.error ?? null }) + '\n');
  else if (cancelled) io.out(`cancelled run ${run.runId} (${run.workflowDisplayName ?? run.workflow}): ${run.status}\n`);
  else io.out(`run ${run.runId} (${run.workflowDisplayName ?? run.workflow}) had already ended: ${run.status}; nothing to cancel\n`);
  return EXIT_OK;
}

/**
 * "no runs" for `--workflow W`, saying so when no workflow of that name has run here at all (a
 * misspelt name, most often) and naming the ones that have; the list stays empty, as `--json`
 * prints it.
 */
async function noRunsOf(catalog: RegisteredCatalog, workflow: string, name: string): Promise<string> {
  if (await catalog.get(name)) return 'no runs\n';
  const known = (await catalog.list()).map((w) => workflowLabel(w.name, w.displayName)).sort();
  return `no runs: no workflow named '${workflow}' has run here${known.length > 0 ? ` (the workflows here: ${known.join(', ')})` : ''}\n`;
}

/** The display name, and the workflow name after it when they differ: `Document analysis (Document-analysis)`. */
function workflowLabel(name: string, displayName: string | undefined): string {
  return displayName === undefined || displayName === name ? name : `${displayName} (${name})`;
}

function formatRunList(runs: readonly RunRecordView[]): string {
  if (runs.length === 0) return 'no runs\n';
  const lines = [`${'RUN'.padEnd(36)}  ${'WORKFLOW'.padEnd(20)}  ${'STATUS'.padEnd(9)}  ${'STARTED'.padEnd(24)}  TOOK      PARENT`];
  for (const r of runs) {
    const took = r.endedAt ? formatMs(Date.parse(r.endedAt) - Date.parse(r.startedAt)) : '';
    lines.push(
      `${r.runId.padEnd(36)}  ${(r.workflowDisplayName ?? r.workflow).padEnd(20)}  ${r.status.padEnd(9)}  ${r.startedAt.padEnd(24)}  ${took.padEnd(8)}  ${r.parentRunId ?? ''}`.trimEnd(),
    );
  }
  return lines.join('\n') + '\n';
}

const OUTPUT_CHARS = 200;

function preview(v: unknown): string {
  return truncate(typeof v === 'string' ? v : JSON.stringify(v ?? null), OUTPUT_CHARS);
}

/** An event's detail in a line: its message when it has one (a refusal's), else the detail itself. */
function eventSummary(detail: unknown): string {
  const message = (detail as { message?: unknown } | null | undefined)?.message;
  return truncate(typeof message === 'string' ? message : JSON.stringify(detail ?? null), OUTPUT_CHARS);
}

function formatDetails(d: RunDetails): string {
  const r = d.run;
  const took = r.endedAt ? `  ${formatMs(Date.parse(r.endedAt) - Date.parse(r.startedAt))}` : '';
  const lines = [
    `run ${r.runId}  ${workflowLabel(r.workflow, r.workflowDisplayName)}  ${r.status}${took}`,
    `  started ${r.startedAt}${r.endedAt ? `, ended ${r.endedAt}` : ''}`,
  ];
  if (r.idempotencyKey) lines.push(`  idempotency key ${r.idempotencyKey}`);
  if (r.parentRunId) lines.push(`  fork of ${r.parentRunId}`);
  lines.push('', 'steps:');
  const records = recordsByStep(d.records);
  const depth = (id: string | undefined): number => (id === undefined ? 0 : 1 + depth(d.steps.find((s) => s.id === id)?.parent));
  for (const s of d.steps) {
    lines.push(formatStepLine(s, depth(s.parent)));
    const recs = records.get(s.id) ?? [];
    const answer = answerRecord(recs);
    const recordless = recordlessOutput(d, s, recs.length).output;
    if (answer?.output !== undefined && s.state === 'succeeded') lines.push(`      output: ${preview(answer.output)}`);
    else if (recordless !== undefined) lines.push(`      output: ${recordless}`);
    if (answer?.outputRef) lines.push(`      output stored as ${answer.outputRef}`);
    // The instance that failed, which in an agent loop may be a tool call rather than a turn.
    const failed = recs.find((r) => r.status === 'FAILED') ?? recs.at(-1);
    if (failed?.error && s.state === 'failed' && !s.error)
      lines.push(`      ${failed.error.name}: ${truncate(failed.error.message, OUTPUT_CHARS)}`);
  }
  if (r.status === 'SUCCEEDED') lines.push('', `output: ${preview(r.output)}`);
  else if (r.error) lines.push('', `error: ${r.error.name}: ${truncate(readableCause(r.error.message), 400)}`);
  // No history: the execution was dropped after the retention period, or its history cannot be read.
  lines.push(
    d.history.length > 0
      ? `history: ${d.history.length} events`
      : 'history: none kept (dropped after the retention period, or unreadable); steps as their records in DynamoDB say',
  );
  // What the steps do not show: refused tool calls, approvals asked and decided, the fork.
  if (d.events.length > 0) {
    lines.push('', 'events:');
    for (const e of d.events) lines.push(`  ${e.at}  ${e.type}${e.stepId ? `  ${e.stepId}` : ''}: ${eventSummary(e.detail)}`);
  }
  return lines.join('\n') + '\n';
}
