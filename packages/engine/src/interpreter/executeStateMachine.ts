// The interpreter's entry points: check a definition (and the invoker's support for its Task
// resources), then run it in-process with AWS-shaped history events (Execution.ts).
import { Execution } from './Execution.js';
import type { Obj } from './ExecutionContext.js';
import type { AslDefinition, ExecuteOptions, ExecutionResult, TaskInvoker } from './types.js';
import { assertValidDefinition } from './validateDefinition.js';

export { MAX_HISTORY_EVENTS } from './Execution.js';
export { MAX_PAYLOAD_BYTES } from './ExecutionContext.js';

/** Runs an ASL definition to completion in-process. Rejects the definition first if it is invalid. */
export async function executeStateMachine(
  definition: AslDefinition,
  input: unknown,
  options: ExecuteOptions = {},
): Promise<ExecutionResult> {
  assertValidDefinition(definition);
  if (options.invoker?.supports) assertSupportedResources(definition, options.invoker);
  return new Execution(definition, input, options).run();
}

/** A definition checked once and run many times: each run skips the definition checks. */
export interface PreparedStateMachine {
  /** The machine's own copy of the definition, taken when it was checked (later edits to the original do not reach it). */
  readonly definition: AslDefinition;
  /** Runs the checked definition (the invoker's supported resources are still checked on every run). */
  execute(input: unknown, options?: ExecuteOptions): Promise<ExecutionResult>;
}

/** Checks a definition once (throws InvalidDefinition as executeStateMachine does) for many runs. */
export function prepareStateMachine(definition: AslDefinition): PreparedStateMachine {
  const checked = structuredClone(definition);
  assertValidDefinition(checked);
  return {
    definition: checked,
    async execute(input: unknown, options: ExecuteOptions = {}): Promise<ExecutionResult> {
      if (options.invoker?.supports) assertSupportedResources(checked, options.invoker);
      return new Execution(checked, input, options).run();
    },
  };
}

/** Every Task state's `Resource` in a definition, with its JSON-pointer location (nested branches and processors too). */
export function taskResources(definition: unknown, path = ''): { resource: string; path: string }[] {
  const out: { resource: string; path: string }[] = [];
  const states = (definition as { States?: unknown } | null)?.States;
  if (states === null || typeof states !== 'object') return out;
  for (const [name, raw] of Object.entries(states as Record<string, unknown>)) {
    if (raw === null || typeof raw !== 'object') continue;
    const s = raw as Obj;
    const here = `${path}/States/${name}`;
    if (s.Type === 'Task' && typeof s.Resource === 'string') out.push({ resource: s.Resource, path: `${here}/Resource` });
    if (Array.isArray(s.Branches)) s.Branches.forEach((b, i) => out.push(...taskResources(b, `${here}/Branches/${i}`)));
    if (s.ItemProcessor) out.push(...taskResources(s.ItemProcessor, `${here}/ItemProcessor`));
    if (s.Iterator) out.push(...taskResources(s.Iterator, `${here}/Iterator`));
  }
  return out;
}

/** Fails before the run (InvalidDefinition, code UNSUPPORTED_RESOURCE) when the invoker cannot run a Task's resource. */
export function assertSupportedResources(definition: AslDefinition, invoker: TaskInvoker): void {
  const errors = [];
  for (const { resource, path } of taskResources(definition)) {
    const why = invoker.supports?.(resource);
    if (why !== undefined) errors.push({ code: 'UNSUPPORTED_RESOURCE', message: why, path });
  }
  if (errors.length === 0) return;
  const e = new Error(`Invalid State Machine Definition: ${errors.map((x) => `'${x.code}: ${x.message} at ${x.path}'`).join(', ')}`);
  e.name = 'InvalidDefinition';
  (e as Error & { errors: unknown }).errors = errors;
  throw e;
}
