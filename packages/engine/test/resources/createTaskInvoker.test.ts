import { describe, expect, it } from 'vitest';
import { createLambdaInvoker, createTaskInvoker, parseServiceResource } from '@stepforge/engine';

describe('Function: parseServiceResource', () => {
  it('splits optimized integrations into service, action and pattern', () => {
    expect(parseServiceResource('arn:aws:states:::sqs:sendMessage.waitForTaskToken')).toEqual({
      service: 'sqs',
      action: 'sendMessage',
      pattern: 'waitForTaskToken',
      base: 'arn:aws:states:::sqs:sendMessage',
    });
    expect(parseServiceResource('arn:aws:states:::states:startExecution.sync:2')).toMatchObject({ service: 'states', pattern: 'sync:2' });
    expect(parseServiceResource('arn:aws:states:::aws-sdk:dynamodb:query')).toMatchObject({
      service: 'aws-sdk:dynamodb',
      action: 'query',
      pattern: 'request',
    });
    expect(parseServiceResource('arn:aws:lambda:us-east-1:123456789012:function:fn:live')).toMatchObject({
      service: 'lambda-function',
      action: 'fn',
    });
    expect(parseServiceResource('arn:aws:states:us-east-1:123456789012:activity:a')).toBeUndefined();
  });
});

describe('Function: createTaskInvoker', () => {
  const invoker = createTaskInvoker({ lambda: createLambdaInvoker({ fn: async () => 1 }) });

  it('supports the resources the engine implements', () => {
    for (const r of [
      'arn:aws:lambda:us-east-1:123456789012:function:fn',
      'arn:aws:states:::lambda:invoke',
      'arn:aws:states:::lambda:invoke.waitForTaskToken',
      'arn:aws:states:::sqs:sendMessage',
      'arn:aws:states:::sqs:sendMessage.waitForTaskToken',
      'arn:aws:states:::dynamodb:putItem',
      'arn:aws:states:::dynamodb:getItem',
      'arn:aws:states:::dynamodb:updateItem',
      'arn:aws:states:::dynamodb:deleteItem',
      'arn:aws:states:::aws-sdk:dynamodb:query',
    ]) {
      expect(invoker.supports(r), r).toBeUndefined();
    }
  });

  it('names what is wrong with everything else', () => {
    expect(invoker.supports('arn:aws:states:::ecs:runTask.sync')).toMatch(
      /^Resource 'arn:aws:states:::ecs:runTask.sync' is not supported by the embedded engine\. Supported: /,
    );
    expect(invoker.supports('arn:aws:states:::lambda:invoke.sync')).toBe('lambda:invoke does not support the .sync pattern');
    expect(invoker.supports('arn:aws:states:::dynamodb:query')).toBe(
      'dynamodb:query is not an optimized DynamoDB integration (use putItem, getItem, updateItem, deleteItem, or aws-sdk:dynamodb:query)',
    );
    expect(invoker.supports('arn:aws:states:::dynamodb:putItem.waitForTaskToken')).toBe(
      'dynamodb:putItem supports only the request-response pattern, not .waitForTaskToken',
    );
    expect(invoker.supports('arn:aws:states:::aws-sdk:dynamodb:frobnicate')).toBe("aws-sdk:dynamodb has no action 'frobnicate'");
    expect(invoker.supports('arn:aws:states:::sqs:receiveMessage')).toBe(
      'sqs:receiveMessage is not an optimized SQS integration (only sendMessage is)',
    );
    expect(invoker.supports('arn:aws:states:::states:startExecution')).toBe(
      'states:startExecution needs the executions manager (run through the API server or `asl run`)',
    );
    expect(createTaskInvoker({}).supports('arn:aws:states:::lambda:invoke')).toBe('Lambda resources need handlers (none were registered)');
    expect(createTaskInvoker({ sqs: false }).supports('arn:aws:states:::sqs:sendMessage')).toBe(
      'SQS resources are disabled (no SQS endpoint configured)',
    );
  });

  it('fails a waitForTaskToken task without a token with States.Runtime', async () => {
    await expect(
      invoker.invoke(
        {
          resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
          input: { FunctionName: 'fn', Payload: {} },
          stateName: 'S',
          signal: new AbortController().signal,
          context: {} as never,
          queryLanguage: 'JSONPath',
        },
        { heartbeat: () => undefined, emit: () => undefined },
      ),
    ).rejects.toMatchObject({ name: 'TaskFailure', error: 'States.Runtime' });
  });
});
