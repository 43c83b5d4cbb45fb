import { METRIC_LINE_PREFIX } from '../../functions/shared/metric-line-writer.js';
import { sendMetricsTo } from '../../functions/shared/metrics.js';

/**
 * Benches' metric lines are dropped rather than printed, as tests keep theirs off stdout
 * (`test/support/metrics-off-stdout.ts`): hundreds of `{"service":"flowgate",…}` lines hid the figures. Handlers
 * a bench calls in this process still build and hand over each line (only the write to stdout is
 * gone); a local stack started with `metrics: 'stdout'` (the cost bench, which bills their bytes as
 * log ingestion) still writes them; bench children write theirs to stdout, dropped by the parent
 * (`child.ts`), so a child's measured CPU time still includes writing them.
 */
export const dropMetricLines = (): void => void sendMetricsTo(() => undefined);

/** Whether a line of output is a metric line (the service's logger writes `level` first). */
export const isMetricLine = (line: string): boolean => line.startsWith(METRIC_LINE_PREFIX);
