import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { LoopbackHttpHandler } from './LoopbackHttpHandler.js';

// The SDK clients the embedded stack talks to its loopback emulators and engine with: the real
// clients with SigV4 signing, made cheaper per request where nothing on the wire depends on it.

/** The region the embedded stack's clients and ARNs use. */
export const LOOPBACK_REGION = 'us-east-1';
/** Dummy credentials: the emulators check that requests are signed, not by whom. */
export const LOOPBACK_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * Options every SDK client of the stack shares: the loopback endpoint, dummy credentials (the
 * requests are still SigV4-signed), and a LoopbackHttpHandler of its own (a client's destroy()
 * closes its handler).
 */
function loopbackClientOptions(endpoint: string) {
  return { endpoint, region: LOOPBACK_REGION, credentials: LOOPBACK_CREDENTIALS, requestHandler: new LoopbackHttpHandler() };
}

/**
 * Drops the SDK's User-Agent middleware from a client of the loopback emulators or the engine:
 * it rebuilds and escapes the whole user-agent string (with the feature list) on every request,
 * which measured about a tenth of the embedded stack's CPU per step, and neither dynalite nor the
 * engine reads `user-agent` or `x-amz-user-agent`. Signing runs after it (finalizeRequest) and
 * signs the headers that are there, so every request is still SigV4-signed in full.
 */
export function withoutUserAgent<C extends { middlewareStack: { remove(name: string): boolean } }>(client: C): C {
  client.middlewareStack.remove('getUserAgentMiddleware');
  return client;
}

/** The part of a client's resolved config that builds its SigV4 signer. */
interface SignerConfig {
  signer: (authScheme?: { signingRegion?: string; signingName?: string }) => Promise<unknown>;
}

/**
 * Keeps the SigV4 signer the SDK builds for a client, per signing region and service, instead of
 * building it again for every request: the SDK's default `signer` copies the whole client config
 * into a new SignatureV4 each time, about a third of what signing a loopback request cost. The
 * signer is the SDK's own and signs every request in full; only its construction is shared (it
 * holds no per-request state, and the credentials are static).
 */
export function withSharedSigner<C extends { config: object }>(client: C): C {
  const config = client.config as SignerConfig;
  const build = config.signer;
  const built = new Map<string, Promise<unknown>>();
  config.signer = (authScheme) => {
    const key = `${authScheme?.signingRegion ?? ''}/${authScheme?.signingName ?? ''}`;
    let signer = built.get(key);
    if (!signer) {
      signer = build(authScheme);
      built.set(key, signer);
      signer.catch(() => built.delete(key));
    }
    return signer;
  };
  return client;
}

/** A loopback client made cheaper per request: no User-Agent middleware, a shared signer. */
function tuned<C extends { config: object; middlewareStack: { remove(name: string): boolean } }>(client: C): C {
  return withSharedSigner(withoutUserAgent(client));
}

/** The Step Functions client of the embedded engine. */
export function loopbackSfnClient(endpoint: string): SFNClient {
  // disableHostPrefix: StartSyncExecution would otherwise go to sync-<host>. cacheMiddleware: the
  // middleware stack is resolved once per command class rather than on every call.
  return tuned(new SFNClient({ ...loopbackClientOptions(endpoint), disableHostPrefix: true, maxAttempts: 1, cacheMiddleware: true }));
}

/**
 * The DynamoDB clients of the runtime: one for the DocumentClient, and one with cacheMiddleware
 * for the writes every step makes (the DocumentClient refuses a client with that setting).
 */
export function loopbackDynamoClients(endpoint: string): { dynamodb: DynamoDBClient; dynamodbCommands: DynamoDBClient } {
  return {
    dynamodb: tuned(new DynamoDBClient(loopbackClientOptions(endpoint))),
    dynamodbCommands: tuned(new DynamoDBClient({ ...loopbackClientOptions(endpoint), cacheMiddleware: true })),
  };
}
