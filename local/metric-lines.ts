import { AsyncLocalStorage } from 'node:async_hooks';
import { metricFiltersOf, metricsFromLine, type FilterDatapoint } from '../functions/shared/metric-filters.js';
import { sendMetricsTo } from '../functions/shared/metrics.js';

/**
 * Where the local stack's metric lines go, and the metrics they make. Deployed, Lambda sends them
 * from stdout to the writing function's log group, whose metric filters make the `Flowgate`
 * metrics; locally stdout is the user's terminal or a test run's output, where thousands of them
 * hid everything else, so a stack keeps them in memory by default (`LocalStack.metricLines()`),
 * each with the function that wrote it, and applies that function's filters, the deployed ones
 * (`functions/shared/metric-filters.ts`), to make the same metrics (`LocalStack.metrics()`). The
 * cost bench, which wants them where Lambda writes them, asks for stdout, and `npm start` drops
 * them (`none`) unless `FLOWGATE_METRICS=stdout` asks for stdout: it prints a line per request instead.
 *
 * Metrics are one per process (`functions/shared/metrics.ts`), like the logger: every stack
 * running in a process receives every line of it, from any stack.
 */
export type MetricLinesTarget = 'memory' | 'stdout' | 'none';

/** Lines a stack keeps in memory; the oldest go first, so a long-running stack stays bounded. */
export const MAX_METRIC_LINES_IN_MEMORY = 20_000;

/** A metric line and the function that wrote it (its log group, deployed); none when written outside any invocation. */
export interface WrittenLine {
  fn?: string;
  line: string;
}

/** The function whose invocation is running: the local stack runs each invocation in it (`asFunction`). */
const writingFunction = new AsyncLocalStorage<string>();

/** Runs one invocation of `fn`: the metric lines it writes are `fn`'s, as they go to `fn`'s log group deployed. */
export const asFunction = <T>(fn: string, invoke: () => T): T => writingFunction.run(fn, invoke);

const listeners = new Set<(written: WrittenLine) => void>();
/** Where the lines went before the first stack started (stdout, or a test run's own sink), put back after the last. */
let before: ((line: string) => void) | undefined;
const fanOut = (written: WrittenLine) => {
  for (const listener of listeners) listener(written);
};
const fromThisThread = (line: string) => fanOut({ fn: writingFunction.getStore(), line });

export interface MetricLines {
  /** The lines kept so far (none for `stdout` and `none`), oldest first. */
  lines(): string[];
  /** The same, each with the function that wrote it. */
  written(): WrittenLine[];
  /** What the metric filters on each writing function's log group make of the lines kept so far. */
  metrics(): FilterDatapoint[];
  /** Stops receiving; the last one to stop hands the process's metrics back to where they went before. */
  stop(): void;
}

/** What the filters of each line's function make of the lines, as CloudWatch does on its log group. */
export function metricsOfLines(lines: readonly WrittenLine[]): FilterDatapoint[] {
  const filters = new Map<string, ReturnType<typeof metricFiltersOf>>();
  const filtersOf = (fn: string) => filters.get(fn) ?? filters.set(fn, metricFiltersOf(fn)).get(fn)!;
  return lines.flatMap(({ fn, line }) => (fn === undefined ? [] : metricsFromLine(filtersOf(fn), line)));
}

/** Starts receiving this process's metric lines for one stack. */
export function receiveMetricLines(target: MetricLinesTarget): MetricLines {
  const kept: WrittenLine[] = [];
  const listener = target === 'stdout'
    ? ({ line }: WrittenLine) => void process.stdout.write(`${line}\n`)
    : target === 'none' ? () => undefined
    : (written: WrittenLine) => {
      kept.push(written);
      if (kept.length > MAX_METRIC_LINES_IN_MEMORY) kept.splice(0, kept.length - MAX_METRIC_LINES_IN_MEMORY);
    };
  if (listeners.size === 0) before = sendMetricsTo(fromThisThread);
  listeners.add(listener);
  return {
    lines: () => kept.map(({ line }) => line),
    written: () => [...kept],
    metrics: () => metricsOfLines(kept),
    stop() {
      if (!listeners.delete(listener)) return;
      if (listeners.size === 0) sendMetricsTo(before);
    },
  };
}

/** A line the flow worker wrote on its own thread of this process, received as if written here. */
export const receiveLineFromThread = (line: string): void => fanOut({ fn: 'flowWorker', line });
