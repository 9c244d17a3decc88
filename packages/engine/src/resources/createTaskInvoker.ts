import { TaskFailure } from '../interpreter/TaskFailure.js';
import type { TaskHooks, TaskInvocation, TaskInvoker } from '../interpreter/types.js';
import { DynamoDbResource } from './DynamoDbResource.js';
import { parseServiceResource, type ServiceResource } from './parseServiceResource.js';
import { SqsResource, type ServiceEndpointOptions } from './SqsResource.js';
import { StartExecutionResource, type ChildExecutions } from './StartExecutionResource.js';
import { TaskTokenRegistry } from './TaskTokenRegistry.js';

/** What the composed invoker can reach. Leave a service out to make its resources unsupported. */
export interface TaskInvokerOptions {
  /** Runs Lambda function ARNs and `arn:aws:states:::lambda:invoke` (the interpreter's Lambda invoker). */
  readonly lambda?: TaskInvoker;
  /** SQS endpoint for `sqs:sendMessage` / `aws-sdk:sqs:*`; `false` disables SQS resources. */
  readonly sqs?: ServiceEndpointOptions | false;
  /** DynamoDB endpoint for `dynamodb:*Item` / `aws-sdk:dynamodb:*`; `false` disables them. */
  readonly dynamodb?: ServiceEndpointOptions | false;
  /** Child executions for `states:startExecution` (the executions manager). */
  readonly executions?: ChildExecutions;
  /** Where `.waitForTaskToken` tasks wait; share it with whatever receives SendTask* calls. */
  readonly tokens?: TaskTokenRegistry;
}

/** A TaskInvoker over every supported resource, plus the handles its owner needs. */
export interface ComposedTaskInvoker extends TaskInvoker {
  readonly tokens: TaskTokenRegistry;
  supports(resource: string): string | undefined;
  /** Closes the SDK clients. */
  close(): void;
}

const SUPPORTED_LIST =
  'Lambda function ARNs, arn:aws:states:::lambda:invoke[.waitForTaskToken], arn:aws:states:::sqs:sendMessage[.waitForTaskToken], ' +
  'arn:aws:states:::dynamodb:putItem|getItem|updateItem|deleteItem, arn:aws:states:::aws-sdk:dynamodb:*, arn:aws:states:::aws-sdk:sqs:*, ' +
  'arn:aws:states:::states:startExecution[.sync|.sync:2|.waitForTaskToken]';

/**
 * Composes the Task resources: Lambda (delegated), SQS, DynamoDB and child executions, each
 * optionally in the `.waitForTaskToken` form. `supports()` lets a definition be rejected before
 * it runs when it names anything else.
 */
export function createTaskInvoker(options: TaskInvokerOptions = {}): ComposedTaskInvoker {
  const tokens = options.tokens ?? new TaskTokenRegistry();
  const sqs = options.sqs === false ? undefined : new SqsResource(options.sqs ?? {});
  const dynamodb = options.dynamodb === false ? undefined : new DynamoDbResource(options.dynamodb ?? {});
  const states = new StartExecutionResource(options.executions);
  const lambda = options.lambda;

  function check(r: ServiceResource | undefined, resource: string): string | undefined {
    if (!r) return `Resource '${resource}' is not supported by the embedded engine. Supported: ${SUPPORTED_LIST}.`;
    switch (r.service) {
      case 'lambda-function':
      case 'lambda': {
        if (r.service === 'lambda' && r.action !== 'invoke') return `lambda:${r.action} is not supported (only lambda:invoke)`;
        if (r.pattern === 'sync' || r.pattern === 'sync:2') return `lambda:invoke does not support the .${r.pattern} pattern`;
        if (!lambda) return 'Lambda resources need handlers (none were registered)';
        return lambda.supports?.(r.pattern === 'waitForTaskToken' ? r.base : resource);
      }
      case 'sqs':
      case 'aws-sdk:sqs':
        return sqs ? sqs.supports(r) : 'SQS resources are disabled (no SQS endpoint configured)';
      case 'dynamodb':
      case 'aws-sdk:dynamodb':
        return dynamodb ? dynamodb.supports(r) : 'DynamoDB resources are disabled (no DynamoDB endpoint configured)';
      case 'states':
        return states.supports(r);
      default:
        return `Resource '${resource}' is not supported by the embedded engine. Supported: ${SUPPORTED_LIST}.`;
    }
  }

  async function dispatch(r: ServiceResource, inv: TaskInvocation, hooks: TaskHooks): Promise<unknown> {
    switch (r.service) {
      case 'lambda-function':
      case 'lambda':
        // The Lambda invoker sees the plain resource: the token wait is done here for every service.
        return lambda!.invoke(r.pattern === 'waitForTaskToken' ? { ...inv, resource: r.base } : inv, hooks);
      case 'sqs':
      case 'aws-sdk:sqs':
        return sqs!.invoke(r, inv, hooks);
      case 'dynamodb':
      case 'aws-sdk:dynamodb':
        return dynamodb!.invoke(r, inv, hooks);
      default:
        return states.invoke(r, inv, hooks);
    }
  }

  return {
    tokens,
    supports(resource: string) {
      return check(parseServiceResource(resource), resource);
    },
    async invoke(inv: TaskInvocation, hooks: TaskHooks): Promise<unknown> {
      const r = parseServiceResource(inv.resource);
      const problem = check(r, inv.resource);
      // Normally caught before the run (supports); a resource computed at run time can still get here.
      if (problem !== undefined) throw new TaskFailure('States.Runtime', problem);
      if (r!.pattern !== 'waitForTaskToken') return dispatch(r!, inv, hooks);
      const token = inv.taskToken;
      if (token === undefined)
        throw new TaskFailure('States.Runtime', `No task token was issued for the .waitForTaskToken resource '${inv.resource}'.`);
      const waiting = tokens.wait(token, inv.signal, () => hooks.heartbeat());
      waiting.catch(() => undefined); // observed below; avoids an unhandled rejection if dispatch throws first
      let submitted: unknown;
      try {
        submitted = await dispatch(r!, inv, hooks);
      } catch (e) {
        tokens.cancel(token);
        throw e;
      }
      hooks.emit({
        type: 'TaskSubmitted',
        taskSubmittedEventDetails: {
          output: JSON.stringify(submitted),
          outputDetails: { truncated: false },
          resource: `${r!.action}.waitForTaskToken`,
          resourceType: r!.service === 'lambda-function' ? 'lambda' : r!.service,
        },
      });
      return waiting;
    },
    close() {
      sqs?.close();
      dynamodb?.close();
    },
  };
}
