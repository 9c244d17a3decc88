// Powertools Tracer and Metrics for a handler on Lambda. Loaded with import() on Lambda only: the
// X-Ray SDK turns on async hooks when it loads, which would slow every promise of an embedded run.
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { METRICS_NAMESPACE, type MetricName, type Telemetry } from './Telemetry.js';

/** Telemetry of one Lambda container: its SDK clients traced, its metrics published per invocation. */
export function lambdaTelemetry(serviceName: string): Telemetry & { readonly tracer: Tracer; readonly metrics: Metrics } {
  const tracer = new Tracer({ serviceName });
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName });
  let pending = false;
  return {
    enabled: true,
    tracer,
    metrics,
    captureClient: (client) => tracer.captureAWSv3Client(client),
    addMetric: (name: MetricName, value: number) => {
      metrics.addMetric(name, MetricUnit.Count, value);
      pending = true;
    },
    flush: () => {
      // An invocation that recorded nothing publishes nothing (Powertools would warn of an empty set).
      if (!pending) return;
      pending = false;
      metrics.publishStoredMetrics();
    },
  };
}
