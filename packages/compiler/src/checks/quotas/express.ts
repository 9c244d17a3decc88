// What an Express state machine cannot run: the callback (.waitForTaskToken) and run-a-job (.sync)
// integrations. `compile --express` refuses such a workflow; the CDK app deploys it as Standard.
import { StepforgeError } from '@stepforge/contract';

/** Why an ASL definition cannot run as an Express workflow, or undefined when it can. */
export function expressBlocker(asl: unknown): string | undefined {
  const text = JSON.stringify(asl);
  // Express workflows support neither the callback (.waitForTaskToken) nor the run-a-job (.sync) patterns.
  if (text.includes('.waitForTaskToken'))
    return 'its tool calls wait for a task token (so that policy can gate them for a human), which Express workflows do not support';
  if (/\.sync(:2)?"/.test(text)) return 'it uses a .sync integration, which Express workflows do not support';
  return undefined;
}

/** Throws `express_unsupported` when workflow `name`'s definition cannot run as Express. */
export function checkExpress(name: string, asl: unknown): void {
  const blocker = expressBlocker(asl);
  if (blocker === undefined) return;
  throw new StepforgeError('express_unsupported', `workflow '${name}' cannot run as an Express workflow: ${blocker}`, {
    hint: "compile it without --express, as a Standard workflow (what the CDK app deploys it as, too); only a workflow without tool calls, an agent's included, can run as Express",
  });
}
