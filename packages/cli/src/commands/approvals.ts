import { parseCommandArgs } from './parseCommandArgs.js';
import { EXIT_OK, UsageError } from '../CliIo.js';
import { truncate } from '../progress/ProgressDisplay.js';
import { openService, stackOptions } from './run.js';
import type { Command } from './registry.js';

const command: Command = {
  name: 'approvals',
  summary: 'list tool calls waiting for a human, approve or reject one',
  usage: 'approvals list | approve ID [--comment C] | reject ID [--comment C]',
  async run(argv, io) {
    const parsed = parseCommandArgs(argv, {
          comment: { type: 'string' },
          status: { type: 'string' },
          json: { type: 'boolean', default: false },
          'in-memory': { type: 'boolean', default: false },
        }, 'approvals list | approve ID [--comment C] | reject ID [--comment C]');
    const { values, positionals } = parsed;
    const [sub, id, ...extra] = positionals;
    if (sub === undefined || !['list', 'approve', 'reject'].includes(sub)) {
      throw new UsageError(`approvals needs one of list, approve ID, reject ID${sub ? ` (got '${sub}')` : ''}`);
    }
    if (sub !== 'list' && (id === undefined || extra.length > 0)) throw new UsageError(`approvals ${sub} takes one approval ID`);
    const status = (values.status ?? 'PENDING').toUpperCase();
    if (!['PENDING', 'APPROVED', 'REJECTED', 'TIMED_OUT'].includes(status)) throw new UsageError(`--status must be PENDING, APPROVED, REJECTED or TIMED_OUT`);
    const { stack, service } = await openService(stackOptions(io, values));
    try {
      if (sub === 'list') {
        const list = await service.listApprovals(status as 'PENDING');
        const rows = list.map((a) => ({
          approvalId: a.approvalId, runId: a.runId, stepId: a.stepId, tool: a.tool, args: a.args,
          status: a.status, createdAt: a.createdAt, expiresAt: a.expiresAt, rule: a.rule ?? null,
        }));
        if (values.json) io.out(JSON.stringify({ approvals: rows }) + '\n');
        else if (rows.length === 0) io.out(`no ${status.toLowerCase()} approvals\n`);
        else {
          for (const a of rows) {
            io.out(`${a.approvalId}  run ${a.runId}  step ${a.stepId}  ${a.tool} ${truncate(JSON.stringify(a.args ?? {}), 80)}  (${a.status}, expires ${a.expiresAt})\n`);
          }
        }
        return EXIT_OK;
      }
      const decided = await service.decideApproval(id!, sub === 'approve' ? 'APPROVED' : 'REJECTED', values.comment);
      if (values.json) io.out(JSON.stringify({ approvalId: decided.approvalId, status: decided.status, runId: decided.runId }) + '\n');
      else io.out(`${decided.status.toLowerCase()} ${decided.approvalId} (run ${decided.runId}, step ${decided.stepId})\n`);
      return EXIT_OK;
    } finally {
      await stack.close();
    }
  },
};
export default command;
