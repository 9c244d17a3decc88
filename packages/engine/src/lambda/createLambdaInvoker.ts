// Task invoker for Lambda: a function-ARN Resource (result = the handler's return value) and
// `arn:aws:states:::lambda:invoke` (result = AWS's Invoke envelope with the value under Payload).
// Handlers are registered by function name or ARN; `${Name}` placeholders resolve through a map.
import { randomUUID } from 'node:crypto';
import type { TaskInvocation, TaskInvoker } from '../interpreter/types.js';
import { TaskFailure } from '../interpreter/TaskFailure.js';
import { MAX_PAYLOAD_BYTES } from '../interpreter/executeStateMachine.js';
import { pythonJsonDumps } from './pythonJson.js';
import { substitutePlaceholders } from '../substitutePlaceholders.js';

/** A local Lambda handler: receives the event and a minimal context. */
export type LambdaHandler = (event: unknown, context: LambdaContext) => unknown;

/** The subset of the Lambda context object handlers get. */
export interface LambdaContext {
  functionName: string;
  invokedFunctionArn: string;
  awsRequestId: string;
  signal: AbortSignal;
}

/** A handler result that is raw response bytes rather than a JSON value (e.g. Python returning bytes). */
export class LambdaRawResponse {
  readonly kind = 'LambdaRawResponse';
  constructor(readonly body: string) {}
}

/**
 * The Lambda runtime a handler stands for. It decides what Step Functions sees, as AWS's runtimes
 * differ: Node.js sends a thrown error as `{"errorType","errorMessage","trace"}` and a result as
 * JSON.stringify writes it; Python sends `{"errorMessage","errorType","requestId","stackTrace"}`
 * and a result as json.dumps writes it (", " and ": " separators, which Content-Length counts).
 */
export type LambdaRuntime = 'nodejs' | 'python';

/**
 * A thrown error may name the runtime that raised it (`lambdaRuntime: 'python'`): a Node handler
 * that runs a Python function for the caller reports that function's exception the way the Python
 * Lambda it stands in for would.
 */
export interface LambdaRuntimeError {
  lambdaRuntime?: LambdaRuntime;
}

/** Options of createLambdaInvoker. */
export interface LambdaInvokerOptions {
  /** `${Name}` → value, applied to Resource and FunctionName. */
  substitutions?: Record<string, string>;
  /** The runtime every handler stands for unless `runtimes` names its own (default `nodejs`: handlers are JavaScript). */
  runtime?: LambdaRuntime;
  /** Per handler (keys as in `handlers`): the runtime it stands for. */
  runtimes?: Record<string, LambdaRuntime>;
  region?: string;
  account?: string;
  partition?: string;
}

const FN_ARN = /^arn:([^:]+):lambda:([^:]*):([^:]*):function:([^:]+)(?::([^:]+))?$/;

/** The function-name part of a name, partial ARN or full ARN (qualifier dropped). */
export function lambdaFunctionName(nameOrArn: string): string {
  const m = FN_ARN.exec(nameOrArn);
  if (m) return m[4]!;
  const parts = nameOrArn.split(':');
  return parts.length === 2 ? parts[0]! : nameOrArn;
}

/** True for resources this invoker handles. */
export function isLambdaResource(resource: string): boolean {
  return FN_ARN.test(resource) || /^arn:[^:]+:states:::lambda:invoke$/.test(resource);
}

/** Builds a TaskInvoker dispatching Lambda resources to local handlers. */
export function createLambdaInvoker(handlers: Record<string, LambdaHandler>, options: LambdaInvokerOptions = {}): TaskInvoker {
  const region = options.region ?? 'us-east-1';
  const account = options.account ?? '123456789012';
  const partition = options.partition ?? 'aws';
  const table = new Map<string, { handler: LambdaHandler; runtime: LambdaRuntime }>();
  for (const [k, handler] of Object.entries(handlers)) {
    const key = substitutePlaceholders(k, options.substitutions);
    const entry = { handler, runtime: options.runtimes?.[k] ?? options.runtime ?? 'nodejs' };
    table.set(key, entry);
    if (!table.has(lambdaFunctionName(key))) table.set(lambdaFunctionName(key), entry);
  }
  const find = (nameOrArn: string) => table.get(nameOrArn) ?? table.get(lambdaFunctionName(nameOrArn));
  const arnOf = (nameOrArn: string) =>
    FN_ARN.test(nameOrArn) ? nameOrArn : `arn:${partition}:lambda:${region}:${account}:function:${nameOrArn}`;

  const call = async (fnRef: string, event: unknown, inv: TaskInvocation, label: string): Promise<{ value: unknown; text: string }> => {
    const found = find(fnRef);
    if (!found) {
      const arn = arnOf(fnRef);
      throw new TaskFailure(
        'Lambda.ResourceNotFoundException',
        `Function not found: ${arn.split(':').length > 7 ? arn : `${arn}:$LATEST`} (Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException; Request ID: ${randomUUID()}; Proxy: null)`,
      );
    }
    const { handler, runtime } = found;
    const requestId = randomUUID();
    let out: unknown;
    try {
      out = await handler(event, {
        functionName: lambdaFunctionName(fnRef),
        invokedFunctionArn: arnOf(fnRef),
        awsRequestId: requestId,
        signal: inv.signal,
      });
    } catch (e) {
      const { error, cause } = lambdaErrorPayload(
        e,
        (e as LambdaRuntimeError | null)?.lambdaRuntime ?? runtime,
        requestId,
        label === 'lambda' ? 'invoke' : 'arn',
      );
      throw new TaskFailure(error, cause);
    }
    const text =
      out instanceof LambdaRawResponse
        ? out.body
        : out === undefined
          ? 'null'
          : runtime === 'python'
            ? pythonJsonDumps(out)
            : JSON.stringify(out);
    if (text.length * 3 > MAX_PAYLOAD_BYTES && Buffer.byteLength(text) > MAX_PAYLOAD_BYTES) {
      throw new TaskFailure(
        'States.DataLimitExceeded',
        `The state/task '${label}' returned a result with a size exceeding the maximum number of bytes service limit.`,
      );
    }
    let value: unknown = out;
    if (out instanceof LambdaRawResponse) {
      try {
        value = JSON.parse(out.body);
      } catch {
        throw new TaskFailure('Lambda.InvalidResponseException', `The Lambda function returned a response that is not valid JSON.`);
      }
    }
    return { value: value === undefined ? null : value, text };
  };

  return {
    supports: (resource) =>
      isLambdaResource(substitutePlaceholders(resource, options.substitutions)) ? undefined : `Unsupported resource: ${resource}`,
    async invoke(inv) {
      const resource = substitutePlaceholders(inv.resource, options.substitutions);
      if (FN_ARN.test(resource)) return (await call(resource, inv.input, inv, resource)).value;
      if (/^arn:[^:]+:states:::lambda:invoke$/.test(resource)) {
        const params = (inv.input ?? {}) as Record<string, unknown>;
        const fn = params.FunctionName;
        if (typeof fn !== 'string') throw new TaskFailure('States.Runtime', 'The field "FunctionName" is required for lambda:invoke.');
        // A string Payload is sent as the raw request bytes, so the function sees it parsed.
        let payload: unknown = params.Payload === undefined || params.Payload === null ? {} : params.Payload;
        if (typeof payload === 'string') {
          try {
            payload = JSON.parse(payload);
          } catch {
            /* not JSON text: the function receives the string */
          }
        }
        const { value, text } = await call(substitutePlaceholders(fn, options.substitutions), payload, inv, 'lambda');
        const len = String(Buffer.byteLength(text));
        const reqId = randomUUID();
        const date = new Date().toUTCString();
        const trace = `Root=1-${randomUUID().replace(/-/g, '').slice(0, 8)}-${randomUUID().replace(/-/g, '').slice(0, 24)};Sampled=0`;
        const envelope: Record<string, unknown> = {
          ExecutedVersion: '$LATEST',
          Payload: value,
          SdkHttpMetadata: {
            AllHttpHeaders: {
              'X-Amz-Executed-Version': ['$LATEST'],
              'x-amzn-Remapped-Content-Length': ['0'],
              Connection: ['keep-alive'],
              'x-amzn-RequestId': [reqId],
              'Content-Length': [len],
              Date: [date],
              'X-Amzn-Trace-Id': [trace],
              'Content-Type': ['application/json'],
            },
            HttpHeaders: {
              Connection: 'keep-alive',
              'Content-Length': len,
              'Content-Type': 'application/json',
              Date: date,
              'X-Amz-Executed-Version': '$LATEST',
              'x-amzn-Remapped-Content-Length': '0',
              'x-amzn-RequestId': reqId,
              'X-Amzn-Trace-Id': trace,
            },
            HttpStatusCode: 200,
          },
          SdkResponseMetadata: { RequestId: reqId },
          StatusCode: 200,
        };
        if (params.LogType === 'Tail') {
          const log = Buffer.from(`START RequestId: ${reqId} Version: $LATEST\nEND RequestId: ${reqId}\n`).toString('base64');
          envelope.LogResult = log;
          const meta = envelope.SdkHttpMetadata as { AllHttpHeaders: Record<string, unknown>; HttpHeaders: Record<string, unknown> };
          meta.AllHttpHeaders['X-Amz-Log-Result'] = [log];
          meta.HttpHeaders['X-Amz-Log-Result'] = log;
        }
        return envelope;
      }
      throw new TaskFailure('States.Runtime', `Unsupported resource: ${resource}`);
    },
  };
}

/**
 * The error name and cause Step Functions records when a handler throws, as the Lambda runtime the
 * handler stands for reports the exception, in the runtime's own field order. A function-ARN
 * Resource passes on the runtime's bytes (Python's json.dumps text, with ", " and ": "); the
 * `lambda:invoke` integration records the payload as compact JSON (as AWS recorded both).
 */
export function lambdaErrorPayload(
  thrown: unknown,
  runtime: LambdaRuntime,
  requestId: string,
  integration: 'arn' | 'invoke' = 'invoke',
): { error: string; cause: string } {
  const err = (thrown ?? {}) as { name?: unknown; message?: unknown; errorType?: unknown; stackTrace?: unknown; stack?: unknown };
  if (runtime === 'python') {
    const errorType = typeof err.errorType === 'string' ? err.errorType : typeof err.name === 'string' ? err.name : 'Exception';
    const stackTrace = Array.isArray(err.stackTrace) ? err.stackTrace : [];
    const errorMessage = typeof err.message === 'string' ? err.message : String(thrown);
    const payload = { errorMessage, errorType, requestId, stackTrace };
    return { error: errorType, cause: integration === 'arn' ? pythonJsonDumps(payload) : JSON.stringify(payload) };
  }
  // The Node.js runtime's own rule: an Error (or anything with a string name, message and stack)
  // reports those, its trace being the stack's lines; any other thrown value reports its type.
  const isErrorLike =
    thrown instanceof Error ||
    (typeof err.name === 'string' &&
      typeof err.message === 'string' &&
      typeof err.stack === 'string' &&
      err.name !== '' &&
      err.message !== '');
  if (isErrorLike) {
    const errorType = typeof err.name === 'string' ? err.name : 'Error';
    const errorMessage = typeof err.message === 'string' ? err.message : '';
    const trace = typeof err.stack === 'string' ? err.stack.split('\n') : [];
    return { error: errorType, cause: JSON.stringify({ errorType, errorMessage, trace }) };
  }
  const errorType = typeof thrown;
  return { error: errorType, cause: JSON.stringify({ errorType, errorMessage: String(thrown), trace: [] }) };
}
