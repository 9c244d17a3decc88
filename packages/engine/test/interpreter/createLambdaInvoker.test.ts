import { describe, expect, it } from 'vitest';
import { createLambdaInvoker, executeStateMachine, LambdaRawResponse } from '@stepforge/engine';

describe('Function: createLambdaInvoker', () => {
  const handlers = {
    echo: (event: unknown) => ({ got: event }),
    'arn:aws:lambda:us-east-1:123456789012:function:byArn': () => 'arn-handler',
    raw: () => new LambdaRawResponse('"HelloWorld!"'),
    broken: () => {
      throw Object.assign(new Error('nope'), { name: 'ValidationError' });
    },
  };

  it('returns the handler value for a function-ARN Resource', async () => {
    const def = { StartAt: 'T', States: { T: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:echo', End: true } } };
    const r = await executeStateMachine(def, { x: 1 }, { invoker: createLambdaInvoker(handlers) });
    expect(r.output).toEqual({ got: { x: 1 } });
    expect(r.events.map((e) => e.type)).toContain('LambdaFunctionSucceeded');
  });

  it('wraps lambda:invoke results in the Invoke envelope and resolves ${Name} placeholders', async () => {
    const def = {
      QueryLanguage: 'JSONata',
      StartAt: 'T',
      States: { T: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Arguments: { FunctionName: '${EchoArn}', Payload: { y: 2 } }, End: true } },
    };
    const invoker = createLambdaInvoker(handlers, { substitutions: { EchoArn: 'arn:aws:lambda:us-east-1:123456789012:function:echo' } });
    const r = await executeStateMachine(def, {}, { invoker });
    const out = r.output as Record<string, unknown>;
    expect(out.Payload).toEqual({ got: { y: 2 } });
    expect(out.StatusCode).toBe(200);
    expect(out.ExecutedVersion).toBe('$LATEST');
    expect((out.SdkHttpMetadata as { HttpHeaders: Record<string, string> }).HttpHeaders['Content-Length']).toBe(String('{"got": {"y": 2}}'.length));
    expect(r.events.find((e) => e.type === 'TaskScheduled')?.taskScheduledEventDetails).toMatchObject({ resource: 'invoke', resourceType: 'lambda' });
  });

  it('finds handlers registered by ARN when called by name, and parses raw byte results', async () => {
    const invoker = createLambdaInvoker(handlers);
    const def = { StartAt: 'T', States: { T: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: { FunctionName: 'byArn' }, OutputPath: '$.Payload', Next: 'R' }, R: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:raw', End: true } } };
    const r = await executeStateMachine(def, {}, { invoker });
    expect(r.output).toBe('HelloWorld!');
  });

  it("fails the task with the thrown error's name and a Lambda error payload as the cause", async () => {
    const def = { StartAt: 'T', States: { T: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:broken', End: true } } };
    const r = await executeStateMachine(def, {}, { invoker: createLambdaInvoker(handlers) });
    expect(r.error).toBe('ValidationError');
    expect(JSON.parse(r.cause!)).toMatchObject({ errorMessage: 'nope', errorType: 'ValidationError' });
  });

  it('reports an unknown function as Lambda.ResourceNotFoundException', async () => {
    const def = { StartAt: 'T', States: { T: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:ghost', End: true } } };
    const r = await executeStateMachine(def, {}, { invoker: createLambdaInvoker(handlers) });
    expect(r.error).toBe('Lambda.ResourceNotFoundException');
    expect(r.cause).toContain('Function not found: arn:aws:lambda:us-east-1:123456789012:function:ghost:$LATEST');
  });
});

describe('Function: assertSupportedResources', () => {
  it('rejects a resource the invoker cannot run before the execution starts, wherever it is nested', async () => {
    const def = {
      StartAt: 'P',
      States: {
        P: { Type: 'Parallel', Branches: [{ StartAt: 'T', States: { T: { Type: 'Task', Resource: 'arn:aws:states:::ecs:runTask', End: true } } }], End: true },
      },
    };
    let err: unknown;
    try {
      await executeStateMachine(def, {}, { invoker: createLambdaInvoker({}) });
    } catch (e) {
      err = e;
    }
    expect((err as Error).name).toBe('InvalidDefinition');
    expect((err as { errors: unknown[] }).errors).toEqual([
      { code: 'UNSUPPORTED_RESOURCE', message: 'Unsupported resource: arn:aws:states:::ecs:runTask', path: '/States/P/Branches/0/States/T/Resource' },
    ]);
  });
});
