import type { Runtime } from '../runtime/Runtime.js';
import type { WorkflowCatalog, WorkflowEntry } from './ports.js';

/** A workflow name from a name or a state machine ARN (`arn:aws:states:…:stateMachine:NAME`). */
function nameOf(workflow: string): string {
  return workflow.startsWith('arn:') ? workflow.split(':').pop()! : workflow;
}

/**
 * The workflows of a deployed stack (WorkflowCatalog on AWS). Which workflows exist and their state
 * machines come from the environment the stack gives its Lambdas (STEPFORGE_STATE_MACHINES, or
 * STEPFORGE_STATE_MACHINE_ARN_PREFIX); what a run needs beyond that (input schema, steps and edges
 * for progress and `restart --from`, versions) from the workflow's record in the runs table
 * (WorkflowStore), which the stack writes at deploy time (handlers/workflowRecord.ts). A workflow
 * with no record (a state machine the stack did not deploy, named by the ARN prefix) is served with
 * no declared input and no steps: its runs start, and forks of them re-run every step.
 */
export function deployedCatalog(rt: Runtime): WorkflowCatalog {
  const machines = rt.config.stateMachines;
  const arnOf = (name: string): string | undefined =>
    machines[name] ?? (rt.config.stateMachineArnPrefix ? `${rt.config.stateMachineArnPrefix}${name}` : undefined);
  const bare = (name: string, stateMachineArn: string): WorkflowEntry => ({
    name,
    stateMachineArn,
    inputSchema: { fields: [] },
    steps: [],
    edges: [],
    updatedAt: new Date(0).toISOString(),
  });
  const get = async (workflow: string, version?: string): Promise<WorkflowEntry | undefined> => {
    const name = nameOf(workflow);
    const arn = workflow.startsWith('arn:') ? workflow : arnOf(name);
    if (arn === undefined) return undefined;
    const stored = await rt.workflows.get<WorkflowEntry>(name, version);
    if (stored) return { ...stored, stateMachineArn: arn };
    return version === undefined ? bare(name, arn) : undefined;
  };
  return {
    get,
    async forRun(run) {
      return (run.workflowVersion !== undefined ? await get(run.workflow, run.workflowVersion) : undefined) ?? get(run.workflow);
    },
    async list() {
      const entries = await Promise.all(Object.keys(machines).map((name) => get(name)));
      return entries.filter((e): e is WorkflowEntry => e !== undefined).sort((a, b) => a.name.localeCompare(b.name));
    },
  };
}
