import type { StoredMetric, StoredNote } from './metrics.js';

/**
 * Writes an invocation's metrics as compact JSON lines on stdout. Lambda sends each line to the
 * function's log group as one log event whose message is the line (it is written with
 * `process.stdout.write`, not `console`, so the JSON log format does not wrap it), and the metric
 * filters the stack puts on that log group (`metric-filters.ts`) turn its members into the
 * `Flowgate` metrics: no `cloudwatch:PutMetricData` permission, and no Embedded Metric Format
 * `_aws` block (namespace, dimensions, names and units, about 200 bytes a line) billed as log
 * ingestion on every line. Locally the lines go where the local stack sends them
 * (`local/metric-lines.ts`), which applies the same filters.
 *
 * A line: `{"service":"flowgate","reason":"invalid_signature","WebhooksReceived":1,"WebhooksRefused":1,"trigger":"…","requestId":"…"}`.
 * Loaded by the first invocation that counts something, so it is not part of any init. The
 * service's name comes as an argument: a module this chunk imported from the function's own code
 * would be split into a chunk of its own, one more file to load at init.
 */
export function createMetricLineWriter(serviceName: string) {
  return {
    writeMetrics: (batch: readonly (StoredMetric | StoredNote)[], sink: MetricLineSink = toStdout) => {
      for (const line of metricLines(serviceName, batch)) sink(JSON.stringify(line));
    },
  };
}

/** Where metric lines go, one JSON object a call, without the newline. */
export type MetricLineSink = (line: string) => void;
/** Lambda sends stdout to the function's log group, one event a line. */
const toStdout: MetricLineSink = (line) => void process.stdout.write(`${line}\n`);

/** How every metric line starts (the writer puts `service` first): how output is told from other lines. */
export const METRIC_LINE_PREFIX = '{"service":';

type Line = Record<string, string | number>;

/**
 * The lines of one invocation's metrics, as few as a filter's one value per log event allows.
 * Counts of one name and dimension value are summed (alarms read their Sum) into one member; each
 * duration is a value of its own (percentiles need every one), and a line holds one value of a
 * member, so a second duration goes on a second line. A dimension's member holds one value a line:
 * two flows in a batch go on lines of their own. Everything else shares the first line it fits,
 * so a refused delivery is one line (received, refused by reason, the log-only fields) and a batch
 * of seven runs of one flow seven (the summed outcome on the first beside a duration).
 * The log-only fields the invocation noted (a refusal's `trigger` and `requestId`) go on the first
 * line: not dimensions, only what an operator reads in the log event.
 */
export function metricLines(serviceName: string, batch: readonly (StoredMetric | StoredNote)[]): Line[] {
  const entries: { key: string; value: number; dimension?: StoredMetric['dimension'] }[] = [];
  const counts = new Map<string, (typeof entries)[number]>();
  for (const entry of batch) {
    if (entry.unit === 'note') continue;
    if (entry.unit === 'milliseconds') {
      entries.push({ key: entry.name, value: entry.value, dimension: entry.dimension });
      continue;
    }
    const id = `${entry.name}\u0000${entry.dimension?.name ?? ''}\u0000${entry.dimension?.value ?? ''}`;
    const summed = counts.get(id);
    if (summed) summed.value += entry.value;
    else {
      const next = { key: entry.name, value: entry.value, dimension: entry.dimension };
      counts.set(id, next);
      entries.push(next);
    }
  }
  const lines: Line[] = [];
  for (const { key, value, dimension } of entries) {
    const fits = (line: Line) => !(key in line) && (!dimension || line[dimension.name] === undefined || line[dimension.name] === dimension.value);
    let line = lines.find(fits);
    if (!line) lines.push(line = { service: serviceName });
    if (dimension) line[dimension.name] = dimension.value;
    line[key] = value;
  }
  const first = lines[0];
  if (first) {
    for (const note of batch) if (note.unit === 'note' && !(note.name in first)) first[note.name] = note.value;
  }
  return lines;
}
