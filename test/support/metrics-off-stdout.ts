/**
 * Every test file's metric lines go here rather than to stdout, where thousands of them hid a
 * test run's output (vitest `setupFiles`). A local stack started by a test takes them while it
 * runs (`stack.metricLines()`) and hands them back here; a handler test without a stack may read
 * `testMetricLines`. Deployed, and under `npm start`, they still go to stdout.
 */
import { sendMetricsTo } from '../../functions/shared/metrics.js';

const KEPT = 10_000;
export const testMetricLines: string[] = [];
sendMetricsTo((line) => {
  testMetricLines.push(line);
  if (testMetricLines.length > KEPT) testMetricLines.splice(0, testMetricLines.length - KEPT);
});
