import { randomUUID } from 'node:crypto';
import { crc32 } from 'node:zlib';

/** Which service's response headers to imitate (they differ in case and in the headers present). */
export type MetadataFlavour = 'sqs' | 'dynamodb' | 'dynamodb-lowercase' | 'states';

/**
 * The `SdkHttpMetadata`/`SdkResponseMetadata` pair that Step Functions' optimized integrations add
 * to a service response (the Java SDK's view of the HTTP response). `body` is the service response
 * without them; its compact JSON length is the Content-Length AWS reports.
 */
export function withSdkMetadata<T extends object>(
  body: T,
  flavour: MetadataFlavour,
  requestId: string = randomUUID(),
  date: Date = new Date(),
): T & { SdkHttpMetadata: unknown; SdkResponseMetadata: { RequestId: string } } {
  const text = JSON.stringify(body);
  const length = String(Buffer.byteLength(text));
  const httpDate = date.toUTCString();
  let all: Record<string, unknown>;
  let flat: Record<string, string>;
  if (flavour === 'sqs') {
    all = {
      'x-amzn-RequestId': [requestId],
      connection: ['keep-alive'],
      'Content-Length': [length],
      Date: [httpDate],
      'Content-Type': ['application/x-amz-json-1.0'],
    };
    flat = {
      connection: 'keep-alive',
      'Content-Length': length,
      'Content-Type': 'application/x-amz-json-1.0',
      Date: httpDate,
      'x-amzn-RequestId': requestId,
    };
  } else if (flavour === 'states') {
    all = {
      'x-amzn-RequestId': [requestId],
      Connection: ['keep-alive'],
      'Content-Length': [length],
      Date: [httpDate],
      'Content-Type': ['application/x-amz-json-1.0'],
    };
    flat = {
      Connection: 'keep-alive',
      'Content-Length': length,
      'Content-Type': 'application/x-amz-json-1.0',
      Date: httpDate,
      'x-amzn-RequestId': requestId,
    };
  } else {
    // DynamoDB's GetItem answers with a lower-case request-id header (as recorded against AWS).
    const rid = flavour === 'dynamodb-lowercase' ? 'x-amzn-requestid' : 'x-amzn-RequestId';
    const crc = String(crc32(text));
    all = {
      Server: ['Server'],
      Connection: ['keep-alive'],
      [rid]: [requestId],
      'x-amz-crc32': [crc],
      'Content-Length': [length],
      Date: [httpDate],
      'Content-Type': ['application/x-amz-json-1.0'],
    };
    flat = {
      Connection: 'keep-alive',
      'Content-Length': length,
      'Content-Type': 'application/x-amz-json-1.0',
      Date: httpDate,
      Server: 'Server',
      'x-amz-crc32': crc,
      [rid]: requestId,
    };
  }
  return {
    ...body,
    SdkHttpMetadata: { AllHttpHeaders: all, HttpHeaders: flat, HttpStatusCode: 200 },
    SdkResponseMetadata: { RequestId: requestId },
  };
}

/** A service response from an AWS SDK v3 client, minus `$metadata` and undefined members. */
export function stripSdkOutput(output: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(output)) if (k !== '$metadata' && v !== undefined) out[k] = v;
  return out;
}
