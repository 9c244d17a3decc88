// What the Lambda bundles put where the AWS SDK's clients import `@aws-sdk/credential-provider-node`
// (infra/lib/bundling/handlerBundling.ts aliases it here). The SDK's default chain also reads
// profiles, SSO, credential processes and web-identity token files, and brings the STS, SSO and
// sign-in clients for them: ~90 KiB of every handler, none of which a Lambda function can use.
// Lambda gives a function its role's credentials in the environment (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN); where a runtime serves them from a container
// endpoint instead (AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI) they are read there,
// as the default chain would. Anything else fails with the fix, rather than guessing.
import { fromEnv } from '@aws-sdk/credential-provider-env';
import { fromHttp } from '@aws-sdk/credential-provider-http';
import { RuntimeError } from '../errors/RuntimeError.js';

type Init = Parameters<typeof fromEnv>[0] & Parameters<typeof fromHttp>[0];
type CredentialProvider = ReturnType<typeof fromEnv>;

/** The credential chain of a handler bundle: the environment, else the container endpoint. */
export function defaultProvider(init: Init = {}): CredentialProvider {
  return async () => {
    const env = process.env;
    if (env['AWS_ACCESS_KEY_ID'] && env['AWS_SECRET_ACCESS_KEY']) return fromEnv(init)();
    if (env['AWS_CONTAINER_CREDENTIALS_FULL_URI'] || env['AWS_CONTAINER_CREDENTIALS_RELATIVE_URI']) return fromHttp(init)();
    throw new RuntimeError(
      'ConfigError',
      'no AWS credentials: a Stepforge handler bundle reads them from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY ' +
        '(as Lambda sets them for the function role) or from the container endpoint in AWS_CONTAINER_CREDENTIALS_FULL_URI ' +
        'or AWS_CONTAINER_CREDENTIALS_RELATIVE_URI; set one of them (profiles, SSO and instance metadata are not bundled)',
    );
  };
}
