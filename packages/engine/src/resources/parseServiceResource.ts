/** How a Task state waits for its resource (the suffix of an optimized-integration ARN). */
export type IntegrationPattern = 'request' | 'waitForTaskToken' | 'sync' | 'sync:2';

/** A Task `Resource` split into its parts. */
export interface ServiceResource {
  /** `lambda`, `sqs`, `dynamodb`, `states`, `aws-sdk:dynamodb`, … or `lambda-function` for a function ARN. */
  readonly service: string;
  /** `invoke`, `sendMessage`, `putItem`, `startExecution`, … (the function name for `lambda-function`). */
  readonly action: string;
  readonly pattern: IntegrationPattern;
  /** The resource without the pattern suffix, e.g. `arn:aws:states:::sqs:sendMessage`. */
  readonly base: string;
}

// `arn:<partition>:states:::<service>:<action>[.<pattern>]`; aws-sdk integrations have one more segment.
const INTEGRATION = /^arn:([^:]+):states:::(aws-sdk:[A-Za-z0-9-]+|[A-Za-z0-9-]+):([A-Za-z0-9]+)(?:\.(waitForTaskToken|sync:2|sync))?$/;
const FUNCTION_ARN = /^arn:([^:]+):lambda:([^:]*):([^:]*):function:([^:]+)(?::[^:]+)?$/;

/** Parses a Task resource; `undefined` when it is neither a service integration nor a function ARN. */
export function parseServiceResource(resource: string): ServiceResource | undefined {
  const m = INTEGRATION.exec(resource);
  if (m) {
    const pattern = (m[4] ?? 'request') as IntegrationPattern;
    const base = m[4] === undefined ? resource : resource.slice(0, resource.length - m[4].length - 1);
    return { service: m[2]!, action: m[3]!, pattern, base };
  }
  const f = FUNCTION_ARN.exec(resource);
  if (f) return { service: 'lambda-function', action: f[4]!, pattern: 'request', base: resource };
  return undefined;
}
