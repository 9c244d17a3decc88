// Secrets Manager through Powertools Parameters (SSM Parameter Store: awsSsmSecretStore.ts): each
// value cached for the configured TTL, then read again, so a rotated secret is picked up without a
// new container. Loaded with import() by SecretResolver on first use: most processes (every embedded
// one) never read either; and a Lambda bundle carries only the store of the backend it is deployed
// with (SecretResolver, handlerBundling.ts).
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { RuntimeConfig } from '../config/RuntimeConfig.js';
import { awsClientConfig } from '../config/awsClientConfig.js';

/** Reads one secret by id; undefined when the store has none by that id. */
export type SecretStore = (id: string) => Promise<string | undefined>;

/** The Secrets Manager store, its SDK client made with the runtime's endpoint and passed through `capture` (tracing). */
export function awsSecretStore(config: RuntimeConfig, capture: <T extends object>(client: T) => T = (c) => c): SecretStore {
  const maxAge = config.secrets.ttlSeconds;
  const provider = new SecretsProvider({
    awsSdkV3Client: capture(new SecretsManagerClient(awsClientConfig(config.region, config.endpoints.secretsmanager))),
  });
  return async (id) => {
    try {
      const v = await provider.get(id, { maxAge });
      return typeof v === 'string' ? v : undefined;
    } catch (e) {
      if (causeName(e) === 'ResourceNotFoundException') return undefined;
      throw unwrapped(e);
    }
  };
}

/** Powertools wraps the SDK's error (GetParameterError); the SDK's own is its cause. */
export function causeName(e: unknown): string | undefined {
  return ((e as { cause?: { name?: string } }).cause ?? (e as { name?: string })).name;
}

export function unwrapped(e: unknown): unknown {
  return (e as { cause?: unknown }).cause ?? e;
}
