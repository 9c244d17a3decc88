// Step Functions' rules for state names, as the steps' names become them: ASCII, at most 80
// characters, unique in the state machine. The lowering claims the names and reports these findings.
import type { CheckFinding } from '../CheckFinding.js';

/** Longest state name Step Functions accepts. */
export const MAX_STATE_NAME = 80;

/** A character outside printable ASCII (one RegExp for every step, not one per call). */
const NOT_PRINTABLE_ASCII = /[^\x20-\x7e]/;

/** A step whose name has a character outside printable ASCII. */
export function nonAsciiStateName(stepId: string): CheckFinding | undefined {
  if (!NOT_PRINTABLE_ASCII.test(stepId)) return undefined;
  return {
    code: 'state_name',
    message: `step '${stepId}' has a name with non-ASCII characters; Step Functions state names must be ASCII`,
    hint: 'rename the step using ASCII letters, digits, spaces, "-" or "_"',
  };
}

/** A step whose state name (its name, prefixed by its parent's when nested names clash) is too long. */
export function stateNameTooLong(stepId: string, name: string): CheckFinding | undefined {
  if (name.length <= MAX_STATE_NAME) return undefined;
  return {
    code: 'state_name',
    message: `step '${stepId}' gives a state name of ${name.length} characters; Step Functions allows at most ${MAX_STATE_NAME}`,
    hint: 'shorten the step name',
  };
}

/** A step whose state name another state already has. */
export function duplicateStateName(stepId: string, name: string): CheckFinding {
  return {
    code: 'state_name',
    message: `step '${stepId}' gives the state name '${name}' twice; state names must be unique in a state machine`,
    hint: 'give nested steps distinct names',
  };
}

/** A step named like a state the lowering adds to every state machine (`Start`). */
export function reservedStateName(name: string): CheckFinding {
  return { code: 'state_name', message: `a step is named '${name}'` };
}
