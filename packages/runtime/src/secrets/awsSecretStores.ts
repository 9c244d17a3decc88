// Secrets Manager and SSM Parameter Store through Powertools Parameters: each value cached for the
// configured TTL, then read again, so a rotated secret is picked up without a new container. Loaded
// with import() by SecretResolver on first use: most processes (every embedded one) never read either.
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { RuntimeConfig } from '../config/RuntimeConfig.js';
import { awsClientConfig } from '../config/awsClientConfig.js';

/** Reads one secret by id; undefined when the store has none by that id. */
export type SecretStore = (id: string) => Promise<string | undefined>;

/** The store of `backend`, its SDK client made with the runtime's endpoint and passed through `capture` (tracing). */
export function awsSecretStore(backend: 'secretsmanager' | 'ssm', config: RuntimeConfig, capture: <T extends object>(client: T) => T = (c) => c): SecretStore {
  const maxAge = config.secrets.ttlSeconds;
  if (backend === 'secretsmanager') {
    const provider = new SecretsProvider({ awsSdkV3Client: capture(new SecretsManagerClient(awsClientConfig(config.region, config.endpoints.secretsmanager))) });
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
  const provider = new SSMProvider({ awsSdkV3Client: capture(new SSMClient(awsClientConfig(config.region, config.endpoints.ssm))) });
  return async (id) => {
    try {
      const v = await provider.get(`${config.secrets.ssmPrefix}${id}`, { maxAge, decrypt: true });
      return typeof v === 'string' ? v : undefined;
    } catch (e) {
      if (causeName(e) === 'ParameterNotFound') return undefined;
      throw unwrapped(e);
    }
  };
}

/** Powertools wraps the SDK's error (GetParameterError); the SDK's own is its cause. */
function causeName(e: unknown): string | undefined {
  return ((e as { cause?: { name?: string } }).cause ?? (e as { name?: string })).name;
}

function unwrapped(e: unknown): unknown {
  return (e as { cause?: unknown }).cause ?? e;
}
