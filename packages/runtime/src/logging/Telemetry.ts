/** The metrics handlers publish (namespace `Stepforge`, dimension `service`: `stepforge-<handler>`). */
export type MetricName = 'StepsSucceeded' | 'StepErrors' | 'ModelInputTokens' | 'ModelOutputTokens' | 'ApprovalsWaiting';

/** The metric names, for the dashboard and tests. */
export const METRIC_NAMES: readonly MetricName[] = [
  'StepsSucceeded',
  'StepErrors',
  'ModelInputTokens',
  'ModelOutputTokens',
  'ApprovalsWaiting',
];

/** The CloudWatch namespace of the metrics. */
export const METRICS_NAMESPACE = 'Stepforge';

/**
 * What a handler reports besides its logs: traces of its AWS SDK calls and metrics. On Lambda it
 * is Powertools Tracer and Metrics (lambdaTelemetry); elsewhere nothing, as there is no X-Ray
 * daemon or CloudWatch to read either and an embedded run must not print metric documents.
 */
export interface Telemetry {
  /** False when nothing is traced or published (so callers can skip work that only feeds a metric). */
  readonly enabled: boolean;
  /** Trace the client's calls as X-Ray subsegments; returns the same client. */
  captureClient<T extends object>(client: T): T;
  /** Add to the current invocation's metrics. */
  addMetric(name: MetricName, value: number): void;
  /** Publish the invocation's metrics (EMF on standard output, which CloudWatch reads). */
  flush(): void;
}

/** Telemetry that does nothing (the embedded stack, tests, the CLI). */
export const NO_TELEMETRY: Telemetry = {
  enabled: false,
  captureClient: (client) => client,
  addMetric: () => undefined,
  flush: () => undefined,
};
