import { parseCommandArgs } from './parseCommandArgs.js';
import { EXIT_OK, UsageError, type CliIo } from '../CliIo.js';
import { truncate } from '../progress/ProgressDisplay.js';
import { type EmbeddedRunService, type RunRecordView, openService } from '@stepforge/embedded';
import { follow, stackOptions } from './run.js';
import type { Command } from './registry.js';
import { COMMAND_TEXT } from './commandText.js';

const command: Command = {
  name: 'approvals',
  summary: COMMAND_TEXT.approvals.summary,
  usage: COMMAND_TEXT.approvals.usage,
  async run(argv, io) {
    const parsed = parseCommandArgs(
      argv,
      {
        comment: { type: 'string' },
        status: { type: 'string' },
        json: { type: 'boolean', default: false },
        'in-memory': { type: 'boolean', default: false },
      },
      'approvals list | approve ID [--comment C] | reject ID [--comment C]',
    );
    const { values, positionals } = parsed;
    const [sub, id, ...extra] = positionals;
    if (sub === undefined || !['list', 'approve', 'reject'].includes(sub)) {
      throw new UsageError(`approvals needs one of list, approve ID, reject ID${sub ? ` (got '${sub}')` : ''}`);
    }
    // A stray argument or another subcommand's flag is refused, never ignored.
    if (sub === 'list' && id !== undefined)
      throw new UsageError(`approvals list takes no arguments (got ${[id, ...extra].map((a) => `'${a}'`).join(', ')})`);
    if (sub !== 'list' && (id === undefined || extra.length > 0)) throw new UsageError(`approvals ${sub} takes one approval ID`);
    if (sub === 'list' && values.comment !== undefined) throw new UsageError('--comment goes with approvals approve or reject');
    if (sub !== 'list' && values.status !== undefined) throw new UsageError('--status goes with approvals list');
    const status = (values.status ?? 'PENDING').toUpperCase();
    if (!['PENDING', 'APPROVED', 'REJECTED', 'TIMED_OUT'].includes(status))
      throw new UsageError(`--status must be PENDING, APPROVED, REJECTED or TIMED_OUT`);
    // Listing only reads: it never creates a store, and a process that comes to hold the stack
    // for it resumes nothing.
    const { stack, service } = await openService({
      ...stackOptions(io, values),
      ...(sub === 'list' ? { access: 'read' as const, resume: false } : {}),
    });
    try {
      if (sub === 'list') {
        const list = await service.listApprovals(status as 'PENDING');
        const rows = list.map((a) => ({
          approvalId: a.approvalId,
          runId: a.runId,
          stepId: a.stepId,
          tool: a.tool,
          args: a.args,
          status: a.status,
          createdAt: a.createdAt,
          expiresAt: a.expiresAt,
          rule: a.rule ?? null,
          // As GET /approvals answers them (the decision, who made it and their comment), once decided.
          ...(a.status !== 'PENDING' ? { decidedAt: a.decidedAt ?? null, decidedBy: a.decidedBy ?? null, reason: a.reason ?? null } : {}),
        }));
        if (values.json) io.out(JSON.stringify({ approvals: rows }) + '\n');
        else if (rows.length === 0) io.out(`no ${status.toLowerCase()} approvals\n`);
        else {
          for (const a of rows) {
            const state =
              a.status === 'PENDING'
                ? `PENDING, expires ${a.expiresAt}`
                : `${a.status} by ${a.decidedBy ?? 'unknown'} at ${a.decidedAt ?? '?'}${a.reason ? `: ${truncate(a.reason, 80)}` : ''}`;
            io.out(
              `${a.approvalId}  run ${a.runId}  step ${a.stepId}  ${a.tool} ${truncate(JSON.stringify(a.args ?? {}), 80)}  (${state})\n`,
            );
          }
        }
        return EXIT_OK;
      }
      const { approval: decided, delivered } = await service.decideApproval(
        id!,
        sub === 'approve' ? 'APPROVED' : 'REJECTED',
        values.comment,
      );
      if (!values.json) io.out(`${decided.status.toLowerCase()} ${decided.approvalId} (run ${decided.runId}, step ${decided.stepId})\n`);
      // The run goes on in the process that holds the stack. When that is this one (no `run` or
      // `serve` was holding it), it resumed the run on opening and carries it on until it ends:
      // exiting at once would leave it waiting where it is.
      const carried = stack.lastHolder ? await carryOn(io, service, decided.runId, values.json) : undefined;
      if (!stack.owner && !delivered) {
        io.err(
          `note: run ${decided.runId} is not running in the process that holds the stack (pid in .stepforge/stack.json); it takes this decision when it resumes (stepforge serve resumes unfinished runs)\n`,
        );
      }
      if (values.json) {
        io.out(
          JSON.stringify({
            approvalId: decided.approvalId,
            status: decided.status,
            runId: decided.runId,
            ...(carried ? { run: { status: carried.status, output: carried.output ?? null } } : {}),
          }) + '\n',
        );
      }
      return EXIT_OK;
    } finally {
      await stack.close();
    }
  },
};
export default command;

/** Follows a run this process holds until it ends (quietly with `--json`); undefined if it had ended. */
async function carryOn(io: CliIo, service: EmbeddedRunService, runId: string, json: boolean): Promise<RunRecordView | undefined> {
  // The record as it stands (not settled here): a run this decision just finished is followed
  // to its result too.
  const run = await service.runs.getRun(runId);
  if (run?.status !== 'RUNNING') return undefined;
  if (json) return service.wait(runId);
  const entry = await service.catalog.forRun(run);
  if (!entry) return service.wait(runId);
  io.out(
    `no other stepforge process holds this project's stack, so this one carries the run on until it ends (Ctrl-C leaves it where it is, to resume in the next process that holds the stack)\n`,
  );
  return follow(io, service, entry, run, false, true);
}
