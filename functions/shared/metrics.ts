import { onFirstUse } from '../adapters/lazy.js';
import type { MetricLineSink } from './metric-line-writer.js';
import { logFault } from './logger.js';
import { METRICS_SERVICE, type MetricName } from './metric-names.js';

/** One extra dimension, from a bounded set of values (an error code, a deployed flow's name), never an id. */
export interface MetricDimension {
  name: string;
  value: string;
}

/**
 * Log-only fields an invocation may add to its metric line: not dimensions (each value would be a
 * metric of its own), only what an operator reads in the log event. A refused delivery's line is
 * its log entry: its `reason` dimension, the `trigger` it was sent to (when the id named one) and
 * the API Gateway `requestId`, which finds its access log line (source address, status).
 */
export type LineField = 'trigger' | 'requestId' | 'sourceIp';

/** What the composition layer counts through; the domain never sees it. */
export interface MetricsRecorder {
  count(name: MetricName, value?: number, dimension?: MetricDimension): void;
  milliseconds(name: MetricName, value: number, dimension?: MetricDimension): void;
  /** Adds a log-only field to this invocation's metric line (written only if something is counted). */
  note?(field: LineField, value: string): void;
}

export interface StoredMetric {
  name: MetricName;
  unit: 'count' | 'milliseconds';
  value: number;
  dimension?: MetricDimension;
}

/** A log-only field noted for the invocation's line, kept with its metrics until they are written. */
export interface StoredNote {
  name: LineField;
  unit: 'note';
  value: string;
}

/**
 * The metric line writer (`metric-line-writer.ts`) is loaded by the first invocation that counts
 * something (most requests count nothing, and every function's init stays as small as it can),
 * and metrics wait here until the invocation publishes them.
 */
const lineWriter = onFirstUse(async () => (await import('./metric-line-writer.js')).createMetricLineWriter(METRICS_SERVICE));
let stored: (StoredMetric | StoredNote)[] = [];
/** `undefined`: stdout, as deployed. */
let sink: MetricLineSink | undefined;

/**
 * Sends this process's metric lines to `next` instead of stdout (`undefined`: stdout again). Metrics
 * are one per process, like the logger: the local stack keeps them where a test can read them
 * (`local/metric-lines.ts`); deployed, nothing calls this and Lambda reads stdout. Returns the
 * sink it replaces, to be put back.
 */
export function sendMetricsTo(next: MetricLineSink | undefined): MetricLineSink | undefined {
  const previous = sink;
  sink = next;
  return previous;
}

/** One recorder method a unit (written this way, it is the fewest bytes in every function's init). */
const store = (unit: (StoredMetric | StoredNote)['unit']) => (name: string, value: number | string = 1, dimension?: MetricDimension) => {
  stored.push({ name, unit, value, dimension } as StoredMetric | StoredNote);
  // Start loading now, so the invocation's end does not wait for it.
  void lineWriter().catch(() => undefined);
};

export const metricsRecorder: Required<MetricsRecorder> = { count: store('count'), milliseconds: store('milliseconds'), note: store('note') };

/**
 * Writes the metrics stored during an invocation, as metric lines on stdout (or `sendMetricsTo`'s sink); called by the handler
 * wrappers once the answer is ready. Nothing stored, nothing loaded or written. A failure to write
 * is logged, never passed on: metrics must not fail a request.
 */
export async function publishMetrics(): Promise<void> {
  if (!stored.length) return;
  const batch = stored;
  stored = [];
  try {
    (await lineWriter()).writeMetrics(batch, sink);
  } catch (error) {
    await logFault('metrics not written', error);
  }
}
