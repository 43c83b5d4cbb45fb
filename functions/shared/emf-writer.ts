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

/** One EMF line as Powertools serialises it: `_aws` with its directives, then the dimensions' and metrics' values. */
type EmfLine = { _aws: { Timestamp: number; CloudWatchMetrics: unknown[] } } & Record<string, unknown>;

/**
 * Writes one invocation's metrics as few EMF lines as their dimensions allow. Those of each
 * dimension set (none but `service`, or one extra such as a flow's name or a refusal's reason) are
 * one metric directive; directives whose keys do not collide share one line (the format takes an
 * array of directives, each naming its own dimensions and metrics, so no metric takes another's
 * dimension), and two values of one dimension (two flows in a batch) go on lines of their own.
 * A refused delivery is thus one line (received and refused by reason), not two. Counts of one
 * name are summed (alarms read their Sum); durations keep every value (percentiles need them).
 * A batch of ten flow runs is one line, not twenty: log ingestion is billed by the byte.
 */
function writeMetrics(metrics: Metrics, batch: readonly StoredMetric[], sink: EmfSink): void {
  const byDimension = new Map<string, { dimension?: StoredMetric['dimension']; metrics: StoredMetric[] }>();
  for (const metric of batch) {
    const key = metric.dimension ? `${metric.dimension.name}\u0000${metric.dimension.value}` : '';
    const group = byDimension.get(key) ?? { dimension: metric.dimension, metrics: [] };
    group.metrics.push(metric);
    byDimension.set(key, group);
  }
  const lines: EmfLine[] = [];
  for (const { dimension, metrics: group } of byDimension.values()) {
    // An extra dimension applies to every metric of a directive, so each gets a directive of its own
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
        joinLine(lines, line.serializeMetrics() as unknown as EmfLine);
      } finally {
        line.clearMetrics();
        line.clearDimensions();
      }
    }
  }
  for (const line of lines) sink(JSON.stringify(line));
}

/** Adds a directive and its values to the first line where none of its keys is taken (the shared `service` aside), else a line of its own. */
function joinLine(lines: EmfLine[], next: EmfLine): void {
  const { _aws, ...values } = next;
  const fits = (line: EmfLine) => Object.entries(values).every(([key, value]) => !(key in line) || (key === 'service' && line[key] === value));
  const line = lines.find(fits);
  if (!line) {
    lines.push(next);
    return;
  }
  line._aws.CloudWatchMetrics.push(..._aws.CloudWatchMetrics);
  Object.assign(line, values);
}
