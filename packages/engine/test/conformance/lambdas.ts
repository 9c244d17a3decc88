// The Lambda functions the conformance cases use (lambdas.md), re-created in JavaScript with the
// Python runtime's observable behaviour: error names, causes and stack traces, raw byte results.
import { LambdaRawResponse, type LambdaHandler } from '@stepforge/engine';
import type { Clock } from '@stepforge/engine';

/** A Python exception as the Lambda runtime reports it. */
class PythonError extends Error {
  constructor(
    readonly errorType: string,
    message: string,
    readonly stackTrace: string[],
  ) {
    super(message);
    this.name = errorType;
  }
}

/** Builds the handler for one function kind; undefined for an unknown kind. */
export function conformanceLambda(kind: string, clock: Clock): LambdaHandler | undefined {
  switch (kind) {
    case 'id_function':
      return (event) => event;
    case 'echo_function':
      return () => ({ Return: 'HelloWorld' });
    case 'raise_exception':
      return () => {
        throw new PythonError('Exception', 'Some exception was raised.', [
          '  File "/var/task/handler.py", line 2, in handler\n    raise Exception("Some exception was raised.")\n',
        ]);
      };
    case 'raise_custom_exception':
      return () => {
        throw new PythonError('CustomException', '', ['  File "/var/task/handler.py", line 9, in handler\n    raise CustomException()\n']);
      };
    case 'large_output_string':
      return () => new LambdaRawResponse('a'.repeat(257 * 1024));
    case 'return_bytes_str':
      return () => new LambdaRawResponse('"HelloWorld!"');
    case 'wait_60_seconds':
      return async (event, ctx) => {
        await clock.sleep(60_000, ctx.signal);
        return event;
      };
    case 'return_decorated_input':
      return (event) => `input-event-${JSON.stringify(event)}`;
    default:
      return undefined;
  }
}
