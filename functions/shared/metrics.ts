import { onFirstUse } from '../adapters/lazy.js';
import type { EmfSink } from './emf-writer.js';
import { logFault } from './logger.js';
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

export interface StoredMetric {
  name: MetricName;
  unit: 'count' | 'milliseconds';
  value: number;
  dimension?: MetricDimension;
}

/**
 * Powertools Metrics (`emf-writer.ts`) adds about 18 KB to a bundle, enough to take two functions
 * over the 300 KB cold-start budget, and most requests count nothing: it is loaded by the first
 * invocation that does, and metrics wait here until the invocation publishes them.
 */
const emfWriter = onFirstUse(async () => (await import('./emf-writer.js')).createEmfWriter(METRICS_NAMESPACE, METRICS_SERVICE));
let stored: StoredMetric[] = [];
/** `undefined`: stdout, as deployed. */
let sink: EmfSink | undefined;

/**
 * Sends this process's EMF lines to `next` instead of stdout (`undefined`: stdout again). Metrics
 * are one per process, like the logger: the local stack keeps them where a test can read them
 * (`local/metric-lines.ts`); deployed, nothing calls this and Lambda reads stdout. Returns the
 * sink it replaces, to be put back.
 */
export function sendMetricsTo(next: EmfSink | undefined): EmfSink | undefined {
  const previous = sink;
  sink = next;
  return previous;
}

const store = (metric: StoredMetric) => {
  stored.push(metric);
  // Start loading now, so the invocation's end does not wait for it.
  void emfWriter().catch(() => undefined);
};

export const metricsRecorder: MetricsRecorder = {
  count: (name, value = 1, dimension) => store({ name, unit: 'count', value, dimension }),
  milliseconds: (name, value, dimension) => store({ name, unit: 'milliseconds', value, dimension }),
};

/**
 * Writes the metrics stored during an invocation, as EMF lines on stdout (or `sendMetricsTo`'s sink); called by the handler
 * wrappers once the answer is ready. Nothing stored, nothing loaded or written. A failure to write
 * is logged, never passed on: metrics must not fail a request.
 */
export async function publishMetrics(): Promise<void> {
  if (!stored.length) return;
  const batch = stored;
  stored = [];
  try {
    (await emfWriter()).writeMetrics(batch, sink);
  } catch (error) {
    await logFault('metrics not written', error);
  }
}
