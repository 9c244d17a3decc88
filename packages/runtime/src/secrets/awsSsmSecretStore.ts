// SSM Parameter Store through Powertools Parameters, each value cached for the configured TTL. Its
// own module, so that a Lambda bundle deployed with the Secrets Manager backend leaves the SSM client
// out (SecretResolver, handlerBundling.ts): its error registry alone is ~170 KiB minified.
import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { RuntimeConfig } from '../config/RuntimeConfig.js';
import { awsClientConfig } from '../config/awsClientConfig.js';
import { causeName, unwrapped, type SecretStore } from './awsSecretStores.js';

/** The SSM store (`<ssmPrefix><id>`, decrypted), its SDK client passed through `capture` (tracing). */
export function awsSsmSecretStore(config: RuntimeConfig, capture: <T extends object>(client: T) => T = (c) => c): SecretStore {
  const maxAge = config.secrets.ttlSeconds;
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
