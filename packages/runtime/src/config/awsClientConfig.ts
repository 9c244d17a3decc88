/**
 * SDK client options for one service: the configured endpoint (a loopback emulator when embedded)
 * and, for endpoints without real AWS behind them, static dummy credentials so the SDK never goes
 * looking for a profile or instance metadata.
 */
export function awsClientConfig(
  region: string,
  endpoint: string | undefined,
): {
  region: string;
  endpoint?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  maxAttempts?: number;
} {
  if (endpoint === undefined) return { region };
  const hasCreds = process.env.AWS_ACCESS_KEY_ID !== undefined && process.env.AWS_SECRET_ACCESS_KEY !== undefined;
  return {
    region,
    endpoint,
    ...(hasCreds ? {} : { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  };
}
