// The IAM resources that let a role invoke one Bedrock model id as the runtime passes it to Converse.
import { ArnFormat, type Stack } from 'aws-cdk-lib';

/** Geographic prefixes of Bedrock's system-defined (cross-region) inference profile ids. */
const PROFILE_PREFIX = /^(us|us-gov|eu|apac|jp|au|ca|global)\.(.+)$/;

/**
 * The resources `bedrock:InvokeModel` needs for `modelId`: a foundation model in the stack's region;
 * a cross-region inference profile (`us.…`, `eu.…`, `global.…`) and the foundation model it routes
 * to in any region (Bedrock checks both); or an ARN as written (an inference profile ARN also gets
 * its base model, which a system-defined profile names).
 */
export function bedrockResourceArns(stack: Stack, modelId: string): string[] {
  if (modelId.startsWith('arn:')) {
    const profile = /:inference-profile\/(.+)$/.exec(modelId);
    const base = profile ? PROFILE_PREFIX.exec(profile[1]!) : null;
    return base ? [modelId, `arn:${stack.partition}:bedrock:*::foundation-model/${base[2]}`] : [modelId];
  }
  const profile = PROFILE_PREFIX.exec(modelId);
  if (profile) {
    return [
      stack.formatArn({
        service: 'bedrock',
        resource: 'inference-profile',
        resourceName: modelId,
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      }),
      `arn:${stack.partition}:bedrock:*::foundation-model/${profile[2]}`,
    ];
  }
  return [
    stack.formatArn({
      service: 'bedrock',
      resource: 'foundation-model',
      resourceName: modelId,
      account: '',
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    }),
  ];
}
