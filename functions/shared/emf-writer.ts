import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE, METRICS_SERVICE } from './metric-names.js';
import type { StoredMetric } from './metrics.js';

/**
 * One Powertools `Metrics` per process, like the logger: it writes CloudWatch Embedded Metric
 * Format lines to stdout, which Lambda sends to the function's log group and CloudWatch turns
 * into metrics, so no `cloudwatch:PutMetricData` permission is needed. Locally the lines appear in
 * the process output. https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format.html
 * Loaded by the first invocation that counts something (`metrics.ts`), so it is not part of any init.
 */
const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE });

const UNIT = { count: MetricUnit.Count, milliseconds: MetricUnit.Milliseconds } as const;

/** Writes one invocation's metrics: those without an extra dimension on one line, each other on its own. */
export function writeMetrics(batch: readonly StoredMetric[]): void {
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
