import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import type { SFNClient } from '@aws-sdk/client-sfn';
import { sfnSdk, type SfnSdk } from '@stepforge/runtime';
import { Aws4HttpSigner } from './Aws4HttpSigner.js';
import type { MessagePort } from 'node:worker_threads';
import { LoopbackHttpHandler } from './LoopbackHttpHandler.js';
import { lazySdkClient } from './lazySdkClient.js';
import { WorkerPortHttpHandler } from './WorkerPortHttpHandler.js';
import { withPortCommands } from './withPortCommands.js';
import type { LoopbackCredentials } from './loopbackRequestGuard.js';

// The SDK clients the embedded stack talks to its loopback emulators and engine with: the real
// clients with SigV4 signing, made cheaper per request where nothing on the wire depends on it
// (the HTTP transport, the signer's implementation, no User-Agent or trace headers).

/** The region the embedded stack's clients and ARNs use. */
export const LOOPBACK_REGION = 'us-east-1';

/** The SigV4 auth scheme of the loopback clients: the SDK's identity resolution, signed by Aws4HttpSigner. */
const LOOPBACK_AUTH_SCHEMES: NonNullable<DynamoDBClientConfig['httpAuthSchemes']> = [
  {
    schemeId: 'aws.auth#sigv4',
    identityProvider: (config) => config.getIdentityProvider('aws.auth#sigv4'),
    signer: new Aws4HttpSigner(),
  },
];

/**
 * Options every SDK client of the stack shares: the loopback endpoint, the stack's credentials
 * (the services refuse a request not SigV4-signed with them; Aws4HttpSigner signs), and a
 * LoopbackHttpHandler of its own (a client's destroy() closes its handler).
 */
function loopbackClientOptions(endpoint: string, credentials: LoopbackCredentials, port?: MessagePort) {
  return {
    endpoint,
    region: LOOPBACK_REGION,
    credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey },
    requestHandler: port ? new WorkerPortHttpHandler(port) : new LoopbackHttpHandler(),
    httpAuthSchemes: LOOPBACK_AUTH_SCHEMES,
  };
}

/**
 * Drops two middlewares from a client of the loopback emulators or the engine, whose headers only
 * AWS's own endpoints read:
 * - the User-Agent middleware: it rebuilds and escapes the whole user-agent string (with the
 *   feature list) on every request, which measured about a tenth of the embedded stack's CPU per
 *   step, and neither dynalite nor the engine reads `user-agent` or `x-amz-user-agent`;
 * - recursion detection: in a Lambda function it copies the X-Ray trace id (`X-Amzn-Trace-Id`,
 *   `traceparent`) onto each request, so that AWS can stop a function that calls itself in a loop;
 *   it scans the headers and awaits the invoke store every request (about 18 µs, a tenth of the
 *   SDK's own time on a request), and no emulator traces anything.
 * Signing runs after both (finalizeRequest) and signs the headers that are there, so every request
 * is still SigV4-signed in full.
 */
function withoutCloudOnlyHeaders<C extends { middlewareStack: { remove(name: string): boolean } }>(client: C): C {
  client.middlewareStack.remove('getUserAgentMiddleware');
  client.middlewareStack.remove('recursionDetectionMiddleware');
  return client;
}

/**
 * Gives a client's resolved config fast properties in V8. The SDK builds it by adding some fifty
 * properties one resolver at a time, which leaves it in dictionary mode, and its middleware copies
 * it with object spread (`{ ...config, ...context }`) three times a request: on a dictionary-mode
 * object each copy takes the runtime's slow path (≈ 40 µs on the build machine, a third of a
 * request's SDK time). V8 turns an object into fast mode once it is used as a prototype and looked
 * up through, so this does exactly that with a throwaway constructor; the config object, its
 * properties and what the middleware captured are unchanged.
 */
function withFastConfig<C extends { config: object }>(client: C): C {
  function Probe(this: object) {
    /* a constructor whose prototype is the config */
  }
  Probe.prototype = client.config;
  const probe = new (Probe as unknown as new () => { readonly probe?: unknown })();
  // Loads through the instance: a load IC with feedback is what makes V8 turn the prototype fast,
  // and a function only gets feedback after running a while, so one load is not enough (the
  // loopbackClients test checks the outcome with %HasFastProperties).
  for (let i = 0; i < 100; i++) void probe.probe;
  return client;
}

/**
 * The Step Functions client of the embedded engine, built (the SDK loaded) on its first request
 * (lazySdkClient): the owner of the engine calls it in process, so most commands send none.
 * Only `send` and `destroy` may be used.
 */
export function loopbackSfnClient(endpoint: string, credentials: LoopbackCredentials): SFNClient {
  return lazySdkClient(async () => loopbackSfnClientOf(await sfnSdk(), endpoint, credentials));
}

/** The Step Functions client of the embedded engine, built now with the SDK given. */
export function loopbackSfnClientOf(sdk: SfnSdk, endpoint: string, credentials: LoopbackCredentials): SFNClient {
  // disableHostPrefix: StartSyncExecution would otherwise go to sync-<host>. cacheMiddleware: the
  // middleware stack is resolved once per command class rather than on every call.
  return withFastConfig(
    withoutCloudOnlyHeaders(
      new sdk.SFNClient({
        ...loopbackClientOptions(endpoint, credentials),
        disableHostPrefix: true,
        maxAttempts: 1,
        cacheMiddleware: true,
      }),
    ),
  );
}

/**
 * The DynamoDB clients of the runtime: one for the DocumentClient, and one with cacheMiddleware
 * for the writes every step makes (the DocumentClient refuses a client with that setting). With
 * `connect` (the stack's owner, which runs the dynalite worker), each client sends its requests
 * over a private MessagePort of its own rather than loopback HTTP (WorkerPortHttpHandler); the
 * endpoint is still the one the requests are signed for. The commands client, whose commands carry
 * AttributeValues, sends its item operations as plain JSON besides, past the SDK's serializer and
 * signer (withPortCommands).
 */
export function loopbackDynamoClients(
  endpoint: string,
  credentials: LoopbackCredentials,
  connect?: () => MessagePort,
): { dynamodb: DynamoDBClient; dynamodbCommands: DynamoDBClient } {
  const commandOptions = loopbackClientOptions(endpoint, credentials, connect?.());
  const dynamodbCommands = withoutCloudOnlyHeaders(new DynamoDBClient({ ...commandOptions, cacheMiddleware: true }));
  const port = commandOptions.requestHandler;
  return {
    dynamodb: withFastConfig(withoutCloudOnlyHeaders(new DynamoDBClient(loopbackClientOptions(endpoint, credentials, connect?.())))),
    dynamodbCommands: withFastConfig(port instanceof WorkerPortHttpHandler ? withPortCommands(dynamodbCommands, port) : dynamodbCommands),
  };
}
