import { createRequire } from 'node:module';
import type * as SqsSdk from '@aws-sdk/client-sqs';
import { TaskFailure } from '../interpreter/TaskFailure.js';
import type { TaskHooks, TaskInvocation } from '../interpreter/types.js';
import type { ServiceResource } from './parseServiceResource.js';
import { withSdkMetadata } from './SdkHttpMetadata.js';
import { awsSdkServiceFailure, optimizedServiceFailure, toJsonValue } from './serviceErrors.js';

/** Where the SQS client sends its requests (an emulator on loopback, or AWS when omitted). */
export interface ServiceEndpointOptions {
  readonly endpoint?: string;
  readonly region?: string;
  readonly credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

// Exception classes of the Java SDK v1 for SQS; any other error code maps to AmazonSQSException.
const SQS_V1_CLASSES = new Set([
  'QueueDoesNotExistException',
  'InvalidMessageContentsException',
  'UnsupportedOperationException',
  'KmsAccessDeniedException',
  'KmsDisabledException',
  'KmsInvalidStateException',
  'KmsNotFoundException',
  'KmsThrottledException',
  'RequestThrottledException',
  'InvalidSecurityException',
  'KmsOptInRequiredException',
  'KmsInvalidKeyUsageException',
  'InvalidAddressException',
]);
const SQS_V2_CLASSES = new Set([...SQS_V1_CLASSES, 'QueueDoesNotExistException', 'InvalidMessageContentsException']);

/** The `arn:aws:states:::sqs:sendMessage` integration and `aws-sdk:sqs:*`, through the real SQS client. */
export class SqsResource {
  private client?: SqsSdk.SQSClient;
  private sdk?: typeof SqsSdk;
  constructor(private readonly options: ServiceEndpointOptions = {}) {}

  /** A reason the resource is unsupported, or undefined. */
  supports(r: ServiceResource): string | undefined {
    if (r.service === 'sqs') {
      if (r.action !== 'sendMessage') return `sqs:${r.action} is not an optimized SQS integration (only sendMessage is)`;
      if (r.pattern === 'sync' || r.pattern === 'sync:2') return `sqs:sendMessage does not support the .${r.pattern} pattern`;
      return undefined;
    }
    if (r.service === 'aws-sdk:sqs') {
      if (r.pattern !== 'request') return `aws-sdk integrations do not support the .${r.pattern} pattern`;
      return commandFor(loadSdk(), r.action) ? undefined : `aws-sdk:sqs has no action '${r.action}'`;
    }
    return 'not an SQS resource';
  }

  /** Sends the message; for `.waitForTaskToken` the caller waits for the token afterwards. */
  async invoke(r: ServiceResource, inv: TaskInvocation, _hooks: TaskHooks): Promise<unknown> {
    const params = (inv.input ?? {}) as Record<string, unknown>;
    const { client, sdk } = this.load();
    if (r.service === 'aws-sdk:sqs') {
      const Command = commandFor(sdk, r.action);
      if (!Command) throw new TaskFailure('States.Runtime', `aws-sdk:sqs has no action '${r.action}'`);
      try {
        return toJsonValue(await client.send(new Command(params as never) as never));
      } catch (e) {
        throw awsSdkServiceFailure(e, { prefix: 'Sqs', baseClass: 'SqsException', classes: SQS_V2_CLASSES });
      }
    }
    const body = params.MessageBody;
    const input = {
      ...params,
      // The integration serialises a JSON MessageBody for you; a missing body is the service's error.
      MessageBody: body === undefined || body === null ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    } as SqsSdk.SendMessageCommandInput;
    try {
      const out = await client.send(new sdk.SendMessageCommand(input), { abortSignal: inv.signal });
      // AWS's key order (it is what the Content-Length was measured on).
      const result: Record<string, unknown> = {};
      if (out.MD5OfMessageAttributes !== undefined) result.MD5OfMessageAttributes = out.MD5OfMessageAttributes;
      if (out.MD5OfMessageSystemAttributes !== undefined) result.MD5OfMessageSystemAttributes = out.MD5OfMessageSystemAttributes;
      result.MD5OfMessageBody = out.MD5OfMessageBody;
      result.MessageId = out.MessageId;
      if (out.SequenceNumber !== undefined) result.SequenceNumber = out.SequenceNumber;
      return withSdkMetadata(result, 'sqs', out.$metadata.requestId);
    } catch (e) {
      if (inv.signal.aborted) throw inv.signal.reason;
      throw optimizedServiceFailure(e, {
        prefix: 'SQS',
        sdkService: 'AmazonSQS',
        baseClass: 'AmazonSQSException',
        classes: SQS_V1_CLASSES,
      });
    }
  }

  // The SDK is loaded on first use, so importing the engine stays cheap for runs without SQS tasks.
  private load(): { client: SqsSdk.SQSClient; sdk: typeof SqsSdk } {
    this.sdk ??= loadSdk();
    this.client ??= new this.sdk.SQSClient(clientConfig(this.options));
    return { client: this.client, sdk: this.sdk };
  }

  /** Releases the client's sockets. */
  close(): void {
    this.client?.destroy();
  }
}

/** SDK client settings: an emulator endpoint gets dummy credentials; one attempt, since ASL Retry decides. */
export function clientConfig(o: ServiceEndpointOptions): Record<string, unknown> {
  return {
    region: o.region ?? 'us-east-1',
    maxAttempts: 1,
    ...(o.endpoint !== undefined
      ? { endpoint: o.endpoint, credentials: o.credentials ?? { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
    ...(o.credentials !== undefined ? { credentials: o.credentials } : {}),
  };
}

function commandFor(sdk: typeof SqsSdk, action: string): (new (input: never) => unknown) | undefined {
  const name = `${action.charAt(0).toUpperCase()}${action.slice(1)}Command`;
  const C = (sdk as unknown as Record<string, unknown>)[name];
  return typeof C === 'function' ? (C as new (input: never) => unknown) : undefined;
}

// Loaded on first use (synchronously, so the pre-run check can look actions up): importing the
// engine stays cheap for runs that never touch this service.
let cached: typeof SqsSdk | undefined;
function loadSdk(): typeof SqsSdk {
  cached ??= createRequire(import.meta.url)('@aws-sdk/client-sqs') as typeof SqsSdk;
  return cached;
}
