import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { StoredMetric } from './metrics.js';

/**
 * Powertools `Metrics`, made once per process by `metrics.ts`, like the logger: it writes CloudWatch Embedded Metric
 * Format lines to stdout, which Lambda sends to the function's log group and CloudWatch turns
 * into metrics, so no `cloudwatch:PutMetricData` permission is needed. Locally the lines appear in
 * the process output. https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format.html
 * Loaded by the first invocation that counts something, so it is not part of any init. The names
 * come as arguments: a module this chunk imported from the function's own code would be split into
 * a chunk of its own, one more file for every function to load at init.
 */
export function createEmfWriter(namespace: string, serviceName: string) {
  const metrics = new Metrics({ namespace, serviceName });
  return { writeMetrics: (batch: readonly StoredMetric[]) => writeMetrics(metrics, batch) };
}

const UNIT = { count: MetricUnit.Count, milliseconds: MetricUnit.Milliseconds } as const;

/** Writes one invocation's metrics: those without an extra dimension on one line, each other on its own. */
function writeMetrics(metrics: Metrics, batch: readonly StoredMetric[]): void {
  for (const metric of batch) {
    if (metric.dimension) {
      // An extra dimension would apply to every metric of a shared line, so it gets a line of its own.
      const single = metrics.singleMetric();
      single.addDimension(metric.dimension.name, metric.dimension.value);
      single.addMetric(metric.name, UNIT[metric.unit], metric.value);
    } else {
      metrics.addMetric(metric.name, UNIT[metric.unit], metric.value);
    }
  }
  // Never called with nothing stored: Powertools would warn of empty metrics.
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
}
