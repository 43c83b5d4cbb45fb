import { sendMetricsTo } from '../functions/shared/metrics.js';

/**
 * Where the local stack's EMF metric lines go. Deployed, Lambda reads them from stdout; locally
 * stdout is the user's terminal or a test run's output, where thousands of them hid everything
 * else, so a stack keeps them in memory by default (`LocalStack.metricLines()`); the cost bench,
 * which wants them where Lambda writes them, asks for stdout, and `npm start` drops them (`none`)
 * unless `FLOWGATE_METRICS=stdout` asks for stdout: it prints a line per request instead.
 *
 * Metrics are one per process (`functions/shared/metrics.ts`), like the logger: every stack
 * running in a process receives every line of it, from any stack.
 */
export type MetricLinesTarget = 'memory' | 'stdout' | 'none';

/** Lines a stack keeps in memory; the oldest go first, so a long-running stack stays bounded. */
export const MAX_METRIC_LINES_IN_MEMORY = 20_000;

const listeners = new Set<(line: string) => void>();
/** Where the lines went before the first stack started (stdout, or a test run's own sink), put back after the last. */
let before: ((line: string) => void) | undefined;
const fanOut = (line: string) => {
  for (const listener of listeners) listener(line);
};

export interface MetricLines {
  /** The lines kept so far (none for `stdout` and `none`), oldest first. */
  lines(): string[];
  /** Stops receiving; the last one to stop hands the process's metrics back to where they went before. */
  stop(): void;
}

/** Starts receiving this process's EMF lines for one stack. */
export function receiveMetricLines(target: MetricLinesTarget): MetricLines {
  const kept: string[] = [];
  const listener = target === 'stdout'
    ? (line: string) => void process.stdout.write(`${line}\n`)
    : target === 'none' ? () => undefined
    : (line: string) => {
      kept.push(line);
      if (kept.length > MAX_METRIC_LINES_IN_MEMORY) kept.splice(0, kept.length - MAX_METRIC_LINES_IN_MEMORY);
    };
  if (listeners.size === 0) before = sendMetricsTo(fanOut);
  listeners.add(listener);
  return {
    lines: () => [...kept],
    stop() {
      if (!listeners.delete(listener)) return;
      if (listeners.size === 0) sendMetricsTo(before);
    },
  };
}

/** A line written on another thread of this process (the flow worker's), received as if written here. */
export const receiveLineFromThread = (line: string): void => fanOut(line);
