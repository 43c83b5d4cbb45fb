import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { StoredMetric } from './metrics.js';

/**
 * Powertools `Metrics`, made once per process by `metrics.ts`, like the logger: it writes CloudWatch Embedded Metric
 * Format lines to stdout, which Lambda sends to the function's log group and CloudWatch turns
 * into metrics, so no `cloudwatch:PutMetricData` permission is needed. Locally they go where the
 * local stack sends them (`local/metric-lines.ts`). https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format.html
 * Loaded by the first invocation that counts something, so it is not part of any init. The names
 * come as arguments: a module this chunk imported from the function's own code would be split into
 * a chunk of its own, one more file for every function to load at init.
 */
export function createEmfWriter(namespace: string, serviceName: string) {
  const metrics = new Metrics({ namespace, serviceName });
  return { writeMetrics: (batch: readonly StoredMetric[], sink: EmfSink = toStdout) => writeMetrics(metrics, batch, sink) };
}

/** Where EMF lines go, one JSON object a call, without the newline. */
export type EmfSink = (line: string) => void;
/** Lambda sends stdout to the function's log group, where CloudWatch reads the lines as metrics. */
const toStdout: EmfSink = (line) => void process.stdout.write(`${line}\n`);

const UNIT = { count: MetricUnit.Count, milliseconds: MetricUnit.Milliseconds } as const;

/**
 * Writes one invocation's metrics as one EMF line per dimension: those without an extra dimension
 * on one line, those of each extra dimension value (e.g. a flow's name) on one more. Counts of one
 * name are summed (alarms read their Sum); durations keep every value (percentiles need them). A
 * batch of ten flow runs is thus one line, not twenty: log ingestion is billed by the byte.
 */
function writeMetrics(metrics: Metrics, batch: readonly StoredMetric[], sink: EmfSink): void {
  const byDimension = new Map<string, { dimension?: StoredMetric['dimension']; metrics: StoredMetric[] }>();
  for (const metric of batch) {
    const key = metric.dimension ? `${metric.dimension.name}\u0000${metric.dimension.value}` : '';
    const group = byDimension.get(key) ?? { dimension: metric.dimension, metrics: [] };
    group.metrics.push(metric);
    byDimension.set(key, group);
  }
  for (const { dimension, metrics: group } of byDimension.values()) {
    // An extra dimension applies to every metric of a line, so each gets a line of its own
    // (publishing clears the dimension again; the service dimension is a default one and stays).
    const line = metrics;
    if (dimension) line.addDimension(dimension.name, dimension.value);
    const counts = new Map<string, number>();
    for (const metric of group) {
      if (metric.unit === 'count') counts.set(metric.name, (counts.get(metric.name) ?? 0) + metric.value);
      else line.addMetric(metric.name, UNIT[metric.unit], metric.value);
    }
    for (const [name, value] of counts) line.addMetric(name, UNIT.count, value);
    // Serialised here rather than by publishStoredMetrics, which writes to stdout only.
    if (line.hasStoredMetrics()) {
      try {
        sink(JSON.stringify(line.serializeMetrics()));
      } finally {
        line.clearMetrics();
        line.clearDimensions();
      }
    }
  }
}
