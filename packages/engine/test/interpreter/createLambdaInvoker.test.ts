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
    const def = {
      StartAt: 'T',
      States: { T: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:echo', End: true } },
    };
    const r = await executeStateMachine(def, { x: 1 }, { invoker: createLambdaInvoker(handlers) });
    expect(r.output).toEqual({ got: { x: 1 } });
    expect(r.events.map((e) => e.type)).toContain('LambdaFunctionSucceeded');
  });

  it('wraps lambda:invoke results in the Invoke envelope and resolves ${Name} placeholders', async () => {
    const def = {
      QueryLanguage: 'JSONata',
      StartAt: 'T',
      States: {
        T: {
          Type: 'Task',
          Resource: 'arn:aws:states:::lambda:invoke',
          Arguments: { FunctionName: '${EchoArn}', Payload: { y: 2 } },
          End: true,
        },
      },
    };
    const invoker = createLambdaInvoker(handlers, { substitutions: { EchoArn: 'arn:aws:lambda:us-east-1:123456789012:function:echo' } });
    const r = await executeStateMachine(def, {}, { invoker });
    const out = r.output as Record<string, unknown>;
    expect(out.Payload).toEqual({ got: { y: 2 } });
    expect(out.StatusCode).toBe(200);
    expect(out.ExecutedVersion).toBe('$LATEST');
    // A JavaScript handler stands for the Node.js runtime, which writes its result as JSON.stringify does.
    expect((out.SdkHttpMetadata as { HttpHeaders: Record<string, string> }).HttpHeaders['Content-Length']).toBe(
      String('{"got":{"y":2}}'.length),
    );
    const py = await executeStateMachine(
      def,
      {},
      {
        invoker: createLambdaInvoker(handlers, {
          substitutions: { EchoArn: 'arn:aws:lambda:us-east-1:123456789012:function:echo' },
          runtime: 'python',
        }),
      },
    );
    // The Python runtime writes it as json.dumps does.
    expect(
      ((py.output as Record<string, unknown>).SdkHttpMetadata as { HttpHeaders: Record<string, string> }).HttpHeaders['Content-Length'],
    ).toBe(String('{"got": {"y": 2}}'.length));
    expect(r.events.find((e) => e.type === 'TaskScheduled')?.taskScheduledEventDetails).toMatchObject({
      resource: 'invoke',
      resourceType: 'lambda',
    });
  });

  it('finds handlers registered by ARN when called by name, and parses raw byte results', async () => {
    const invoker = createLambdaInvoker(handlers);
    const def = {
      StartAt: 'T',
      States: {
        T: {
          Type: 'Task',
          Resource: 'arn:aws:states:::lambda:invoke',
          Parameters: { FunctionName: 'byArn' },
          OutputPath: '$.Payload',
          Next: 'R',
        },
        R: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:raw', End: true },
      },
    };
    const r = await executeStateMachine(def, {}, { invoker });
    expect(r.output).toBe('HelloWorld!');
  });

  describe('Method: invoke (a handler that throws)', () => {
    const task = (fn: string) => ({
      StartAt: 'T',
      States: { T: { Type: 'Task', Resource: `arn:aws:lambda:us-east-1:123456789012:function:${fn}`, End: true } },
    });
    const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

    it("fails the task with the error's name and the Node.js runtime's error payload, compact and in its field order, for a JavaScript handler", async () => {
      let thrown: Error | undefined;
      const invoker = createLambdaInvoker({
        broken: () => {
          thrown = Object.assign(new Error('nope'), { name: 'ValidationError' });
          throw thrown;
        },
      });
      const r = await executeStateMachine(task('broken'), {}, { invoker });
      expect(r.error).toBe('ValidationError');
      // What the Node.js Lambda runtime sends: errorType, errorMessage, then the stack's lines as trace.
      expect(r.cause).toBe(JSON.stringify({ errorType: 'ValidationError', errorMessage: 'nope', trace: thrown!.stack!.split('\n') }));
      expect(r.cause!.startsWith('{"errorType":"ValidationError","errorMessage":"nope","trace":["ValidationError: nope","    at ')).toBe(
        true,
      );
    });

    it('reports a thrown value that is not an Error by its type, with an empty trace, as the Node.js runtime does', async () => {
      const invoker = createLambdaInvoker({
        broken: () => {
          throw 'plain text';
        },
      });
      const r = await executeStateMachine(task('broken'), {}, { invoker });
      expect(r.error).toBe('string');
      expect(r.cause).toBe('{"errorType":"string","errorMessage":"plain text","trace":[]}');
    });

    it("sends the Python runtime's error payload (errorMessage, errorType, requestId, stackTrace) for a handler standing for a Python function", async () => {
      const pyError = () =>
        Object.assign(new Error('Some exception was raised.'), {
          name: 'Exception',
          stackTrace: ['  File "/var/task/handler.py", line 2, in handler\n'],
        });
      const fns = {
        py: () => {
          throw pyError();
        },
        js: () => {
          throw pyError();
        },
      };
      const invoker = createLambdaInvoker(fns, { runtimes: { py: 'python' } });
      // Through lambda:invoke the payload is recorded as compact JSON.
      const invoke = {
        StartAt: 'T',
        States: { T: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: { FunctionName: 'py' }, End: true } },
      };
      const r = await executeStateMachine(invoke, {}, { invoker });
      expect(r.error).toBe('Exception');
      const m =
        /^\{"errorMessage":"Some exception was raised\.","errorType":"Exception","requestId":"([^"]+)","stackTrace":\["  File \\"\/var\/task\/handler\.py\\", line 2, in handler\\n"\]\}$/.exec(
          r.cause!,
        );
      expect(m, r.cause).not.toBeNull();
      expect(m![1]).toMatch(UUID);
      // A function-ARN Resource passes on the runtime's own bytes: Python's json.dumps text.
      const direct = await executeStateMachine(task('py'), {}, { invoker });
      expect(direct.error).toBe('Exception');
      expect(direct.cause).toMatch(
        /^\{"errorMessage": "Some exception was raised\.", "errorType": "Exception", "requestId": "[0-9a-f-]{36}", "stackTrace": \["  File \\"\/var\/task\/handler\.py\\", line 2, in handler\\n"\]\}$/,
      );
      // The other handler of the same invoker stands for Node.js.
      const js = await executeStateMachine(task('js'), {}, { invoker });
      expect(JSON.parse(js.cause!)).toEqual({
        errorType: 'Exception',
        errorMessage: 'Some exception was raised.',
        trace: expect.any(Array),
      });
      expect(js.cause!.startsWith('{"errorType":')).toBe(true);
    });

    it('takes the runtime an error names (a Node handler running a Python function) over the handler default', async () => {
      const invoker = createLambdaInvoker({
        fn: () => {
          throw Object.assign(new Error('function f threw ValueError: bad'), {
            name: 'FunctionError',
            stackTrace: ['  File "f.py", line 1, in handler\n'],
            lambdaRuntime: 'python',
          });
        },
      });
      const invoke = {
        StartAt: 'T',
        States: { T: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: { FunctionName: 'fn' }, End: true } },
      };
      const r = await executeStateMachine(invoke, {}, { invoker });
      expect(r.error).toBe('FunctionError');
      const cause = JSON.parse(r.cause!) as Record<string, unknown>;
      expect(Object.keys(cause)).toEqual(['errorMessage', 'errorType', 'requestId', 'stackTrace']);
      expect(cause).toMatchObject({
        errorMessage: 'function f threw ValueError: bad',
        errorType: 'FunctionError',
        stackTrace: ['  File "f.py", line 1, in handler\n'],
      });
      expect(r.cause).not.toContain('", "');
    });
  });

  it('reports an unknown function as Lambda.ResourceNotFoundException', async () => {
    const def = {
      StartAt: 'T',
      States: { T: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:ghost', End: true } },
    };
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
        P: {
          Type: 'Parallel',
          Branches: [{ StartAt: 'T', States: { T: { Type: 'Task', Resource: 'arn:aws:states:::ecs:runTask', End: true } } }],
          End: true,
        },
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
      {
        code: 'UNSUPPORTED_RESOURCE',
        message: 'Unsupported resource: arn:aws:states:::ecs:runTask',
        path: '/States/P/Branches/0/States/T/Resource',
      },
    ]);
  });
});
