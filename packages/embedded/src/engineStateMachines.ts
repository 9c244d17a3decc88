import { isSfnApiError, substitutePlaceholders } from '@stepforge/engine';
import { sfnSdk } from '@stepforge/runtime';
import { asSdkCall } from './asSdkCall.js';
import type { EmbeddedStack } from './EmbeddedStack.js';

/** The state-machine actions the catalog registers workflows with, as the Step Functions API answers them. */
export interface StateMachineActions {
  create(input: { name: string; definition: string; roleArn: string; type: 'STANDARD' }): Promise<{ stateMachineArn?: string }>;
  describe(input: { stateMachineArn: string }): Promise<{ definition?: string }>;
  update(input: { stateMachineArn: string; definition: string }): Promise<unknown>;
}

/**
 * The embedded stack's state-machine actions: the Step Functions API on loopback (a process
 * connected to another's stack), or, in the process that owns the engine, its ExecutionManager
 * directly, the code the API server runs for them: registering a workflow is then no HTTP request
 * and no SDK client at all (a `run`'s first request to the engine cost more CPU than its five
 * steps' engine work). The engine's errors keep their API names (`StateMachineAlreadyExists`,
 * `InvalidDefinition`), as the SDK reports them.
 */
export function engineStateMachines(stack: Pick<EmbeddedStack, 'engine' | 'sfn' | 'substitutions'>): StateMachineActions {
  const engine = stack.engine;
  if (!engine) {
    return {
      create: async (input) => stack.sfn.send(new (await sfnSdk()).CreateStateMachineCommand(input)),
      describe: async (input) => stack.sfn.send(new (await sfnSdk()).DescribeStateMachineCommand(input)),
      update: async (input) => stack.sfn.send(new (await sfnSdk()).UpdateStateMachineCommand(input)),
    };
  }
  const m = engine.manager;
  return {
    async create(input) {
      // The same workflow registered again (each `run` of it registers it): the engine would check
      // the whole definition again (its JSONata parsed, every state, every resource) before finding
      // it has it already. What it stores is the definition with the stack's substitutions made,
      // checked when it was stored (its executions run it unchecked, as Step Functions does).
      const arn = embeddedStateMachineArn(input.name);
      const there = asSdkCall(() => {
        try {
          return m.describeStateMachine({ stateMachineArn: arn });
        } catch (e) {
          if (isSfnApiError(e) && e.type === 'StateMachineDoesNotExist') return undefined;
          throw e;
        }
      });
      if (
        there?.definition === substitutePlaceholders(input.definition, stack.substitutions) &&
        there.roleArn === input.roleArn &&
        there.type === input.type
      )
        return { stateMachineArn: arn };
      return asSdkCall(() => m.createStateMachine({ ...input })) as { stateMachineArn?: string };
    },
    describe: async (input) => asSdkCall(() => m.describeStateMachine({ ...input })) as { definition?: string },
    update: async (input) => asSdkCall(() => m.updateStateMachine({ ...input })),
  };
}

/** The ARN the embedded engine gives state machine `name` (its region and account are the stack's). */
export function embeddedStateMachineArn(name: string): string {
  return `arn:aws:states:us-east-1:123456789012:stateMachine:${name}`;
}
