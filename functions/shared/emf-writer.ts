import type { StoredMetric, StoredNote } from './metrics.js';

/**
 * Writes CloudWatch Embedded Metric Format lines to stdout, which Lambda sends to the function's
 * log group and CloudWatch turns into metrics, so no `cloudwatch:PutMetricData` permission is
 * needed. Locally they go where the local stack sends them (`local/metric-lines.ts`).
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
 *
 * The format is small enough to write by hand, and each line is billed by the byte as log
 * ingestion: this writes exactly what the specification requires (`_aws` with `Timestamp` and one
 * directive per dimension set; each metric's `Name` and `Unit`; the dimensions' and metrics'
 * values at the root), the same lines Powertools Metrics wrote, plus the few log-only fields the
 * invocation noted (`metrics.ts`: a refusal's trigger and request id), which CloudWatch keeps in
 * the log event and ignores for metrics. Loaded by the first invocation that counts something, so
 * it is not part of any init. The names come as arguments: a module this chunk imported from the
 * function's own code would be split into a chunk of its own, one more file to load at init.
 */
export function createEmfWriter(namespace: string, serviceName: string, now: () => number = Date.now) {
  return {
    writeMetrics: (batch: readonly (StoredMetric | StoredNote)[], sink: EmfSink = toStdout) => {
      const notes = batch.filter((entry): entry is StoredNote => entry.unit === 'note');
      const metrics = batch.filter((entry): entry is StoredMetric => entry.unit !== 'note');
      writeMetrics({ namespace, serviceName, timestamp: now() }, metrics, sink, Object.fromEntries(notes.map((note) => [note.name, note.value])));
    },
  };
}

/** Where EMF lines go, one JSON object a call, without the newline. */
export type EmfSink = (line: string) => void;
/** Lambda sends stdout to the function's log group, where CloudWatch reads the lines as metrics. */
const toStdout: EmfSink = (line) => void process.stdout.write(`${line}\n`);

/** CloudWatch's names of the units the service uses. */
const UNIT = { count: 'Count', milliseconds: 'Milliseconds' } as const;
/** The specification's limit of values in one metric's array, and of metrics in one directive. */
export const EMF_MAX_VALUES = 100;

interface Directive {
  Namespace: string;
  Dimensions: string[][];
  Metrics: { Name: string; Unit: string }[];
}
type EmfLine = { _aws: { Timestamp: number; CloudWatchMetrics: Directive[] } } & Record<string, unknown>;

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
function writeMetrics(
  context: { namespace: string; serviceName: string; timestamp: number },
  batch: readonly StoredMetric[],
  sink: EmfSink,
  fields: Readonly<Record<string, string>>,
): void {
  const byDimension = new Map<string, { dimension?: StoredMetric['dimension']; metrics: StoredMetric[] }>();
  for (const metric of batch) {
    const key = metric.dimension ? `${metric.dimension.name}\u0000${metric.dimension.value}` : '';
    const group = byDimension.get(key) ?? { dimension: metric.dimension, metrics: [] };
    group.metrics.push(metric);
    byDimension.set(key, group);
  }
  const lines: EmfLine[] = [];
  for (const { dimension, metrics } of byDimension.values()) {
    const durations = new Map<string, number[]>();
    const counts = new Map<string, number>();
    for (const metric of metrics) {
      if (metric.unit === 'count') counts.set(metric.name, (counts.get(metric.name) ?? 0) + metric.value);
      else durations.set(metric.name, [...(durations.get(metric.name) ?? []), metric.value]);
    }
    const values: [name: string, unit: string, value: number | number[]][] = [];
    for (const [name, list] of durations) {
      // At most 100 values an array: the rest go on lines of their own, as a second directive would.
      for (let i = 0; i < list.length; i += EMF_MAX_VALUES) {
        const chunk = list.slice(i, i + EMF_MAX_VALUES);
        values.push([name, UNIT.milliseconds, chunk.length === 1 ? chunk[0]! : chunk]);
      }
    }
    for (const [name, value] of counts) values.push([name, UNIT.count, value]);
    // A name twice (a long array's second chunk) cannot share a line with itself: a directive each.
    const directives: (typeof values)[] = [];
    for (const value of values) {
      const open = directives.find((d) => d.length < EMF_MAX_VALUES && !d.some(([name]) => name === value[0]));
      if (open) open.push(value);
      else directives.push([value]);
    }
    for (const directive of directives) {
      const line: EmfLine = {
        _aws: {
          Timestamp: context.timestamp,
          CloudWatchMetrics: [{
            Namespace: context.namespace,
            Dimensions: [dimension ? ['service', dimension.name] : ['service']],
            Metrics: directive.map(([Name, Unit]) => ({ Name, Unit })),
          }],
        },
        service: context.serviceName,
        ...(dimension && { [dimension.name]: dimension.value }),
        ...Object.fromEntries(directive.map(([name, , value]) => [name, value])),
      };
      joinLine(lines, line);
    }
  }
  // The log-only fields go on the first line (none without a metric): one log event carries them.
  if (lines[0]) Object.assign(lines[0], Object.fromEntries(Object.entries(fields).filter(([key]) => !(key in lines[0]!))));
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
