import { createRequire } from 'node:module';
import type * as DynamoSdk from '@aws-sdk/client-dynamodb';
import { TaskFailure } from '../interpreter/TaskFailure.js';
import type { TaskHooks, TaskInvocation } from '../interpreter/types.js';
import type { ServiceResource } from './parseServiceResource.js';
import { withSdkMetadata } from './SdkHttpMetadata.js';
import { awsSdkServiceFailure, optimizedServiceFailure, toJsonValue } from './serviceErrors.js';
import { clientConfig, type ServiceEndpointOptions } from './SqsResource.js';

/** The four actions Step Functions optimizes for DynamoDB. */
const OPTIMIZED = new Set(['putItem', 'getItem', 'updateItem', 'deleteItem']);

// Java SDK v1 exception classes (optimized integration); ValidationException has none → AmazonDynamoDBException.
const DDB_V1_CLASSES = new Set([
  'ConditionalCheckFailedException',
  'ResourceNotFoundException',
  'ProvisionedThroughputExceededException',
  'ItemCollectionSizeLimitExceededException',
  'TransactionConflictException',
  'RequestLimitExceededException',
  'InternalServerErrorException',
  'ResourceInUseException',
  'LimitExceededException',
  'TransactionCanceledException',
  'TransactionInProgressException',
  'IdempotentParameterMismatchException',
  'DuplicateItemException',
]);

/** `arn:aws:states:::dynamodb:putItem|getItem|updateItem|deleteItem` and `aws-sdk:dynamodb:*`, via the real client. */
export class DynamoDbResource {
  private client?: DynamoSdk.DynamoDBClient;
  private sdk?: typeof DynamoSdk;
  constructor(private readonly options: ServiceEndpointOptions = {}) {}

  /** A reason the resource is unsupported, or undefined. */
  supports(r: ServiceResource): string | undefined {
    if (r.pattern !== 'request') return `${r.service}:${r.action} supports only the request-response pattern, not .${r.pattern}`;
    if (r.service === 'dynamodb') {
      return OPTIMIZED.has(r.action)
        ? undefined
        : `dynamodb:${r.action} is not an optimized DynamoDB integration (use putItem, getItem, updateItem, deleteItem, or aws-sdk:dynamodb:${r.action})`;
    }
    if (r.service === 'aws-sdk:dynamodb')
      return commandFor(loadSdk(), r.action) ? undefined : `aws-sdk:dynamodb has no action '${r.action}'`;
    return 'not a DynamoDB resource';
  }

  /** Runs the action; the result carries AWS's SdkHttpMetadata for the optimized integration. */
  async invoke(r: ServiceResource, inv: TaskInvocation, _hooks: TaskHooks): Promise<unknown> {
    const { client, sdk } = this.load();
    const Command = commandFor(sdk, r.action);
    if (!Command) throw new TaskFailure('States.Runtime', `aws-sdk:dynamodb has no action '${r.action}'`);
    const params = (inv.input ?? {}) as Record<string, unknown>;
    const optimized = r.service === 'dynamodb';
    try {
      const out = (await client.send(new Command(params) as never, { abortSignal: inv.signal })) as { $metadata: { requestId?: string } };
      const body = toJsonValue(out) as Record<string, unknown>;
      return optimized ? withSdkMetadata(body, r.action === 'getItem' ? 'dynamodb-lowercase' : 'dynamodb', out.$metadata.requestId) : body;
    } catch (e) {
      if (inv.signal.aborted) throw inv.signal.reason;
      throw optimized
        ? optimizedServiceFailure(e, {
            prefix: 'DynamoDB',
            sdkService: 'AmazonDynamoDBv2',
            baseClass: 'AmazonDynamoDBException',
            classes: DDB_V1_CLASSES,
          })
        : awsSdkServiceFailure(e, { prefix: 'DynamoDb', baseClass: 'DynamoDbException', classes: DDB_V1_CLASSES });
    }
  }

  // The SDK is loaded on first use, so importing the engine stays cheap for runs without DynamoDB tasks.
  private load(): { client: DynamoSdk.DynamoDBClient; sdk: typeof DynamoSdk } {
    this.sdk ??= loadSdk();
    this.client ??= new this.sdk.DynamoDBClient(clientConfig(this.options));
    return { client: this.client, sdk: this.sdk };
  }

  /** Releases the client's sockets. */
  close(): void {
    this.client?.destroy();
  }
}

function commandFor(sdk: typeof DynamoSdk, action: string): (new (input: unknown) => unknown) | undefined {
  const name = `${action.charAt(0).toUpperCase()}${action.slice(1)}Command`;
  const C = (sdk as unknown as Record<string, unknown>)[name];
  return typeof C === 'function' ? (C as new (input: unknown) => unknown) : undefined;
}

// Loaded on first use (synchronously, so the pre-run check can look actions up): importing the
// engine stays cheap for runs that never touch this service.
let cached: typeof DynamoSdk | undefined;
function loadSdk(): typeof DynamoSdk {
  cached ??= createRequire(import.meta.url)('@aws-sdk/client-dynamodb') as typeof DynamoSdk;
  return cached;
}
