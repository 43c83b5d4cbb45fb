import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE, METRICS_SERVICE, type MetricName } from './metric-names.js';

/** One extra dimension, from a bounded set of values (an error code, a deployed flow's name), never an id. */
export interface MetricDimension {
  name: string;
  value: string;
}

/** What the composition layer counts through; the domain never sees it. */
export interface MetricsRecorder {
  count(name: MetricName, value?: number, dimension?: MetricDimension): void;
  milliseconds(name: MetricName, value: number, dimension?: MetricDimension): void;
}

/**
 * One Powertools `Metrics` per process, like the logger: it writes CloudWatch Embedded Metric
 * Format lines to stdout, which Lambda sends to the function's log group and CloudWatch turns
 * into metrics, so no `cloudwatch:PutMetricData` permission is needed. Locally the lines appear in
 * the process output. https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format.html
 */
const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE });

const add = (name: MetricName, unit: (typeof MetricUnit)[keyof typeof MetricUnit], value: number, dimension?: MetricDimension) => {
  if (!dimension) {
    // Stored and written once per invocation (`publishMetrics`), summed by name.
    metrics.addMetric(name, unit, value);
    return;
  }
  // A dimension of its own would apply to every stored metric, so it goes out on a line of its own now.
  const single = metrics.singleMetric();
  single.addDimension(dimension.name, dimension.value);
  single.addMetric(name, unit, value);
};

export const metricsRecorder: MetricsRecorder = {
  count: (name, value = 1, dimension) => add(name, MetricUnit.Count, value, dimension),
  milliseconds: (name, value, dimension) => add(name, MetricUnit.Milliseconds, value, dimension),
};

/**
 * Writes the metrics stored during an invocation; called by the handler wrappers once the answer
 * is ready. Nothing stored, nothing written (Powertools would warn of empty metrics otherwise).
 */
export function publishMetrics(): void {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
}
