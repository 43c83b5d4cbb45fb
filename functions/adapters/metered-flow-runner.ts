import type { FlowResult, FlowRunner } from '../domain/flows/ports.js';
import { METRIC, METRIC_DIMENSION } from '../shared/metric-names.js';
import type { MetricsRecorder } from '../shared/metrics.js';

const OUTCOME_METRIC = {
  succeeded: METRIC.flowRunsSucceeded,
  failed: METRIC.flowRunsFailed,
  timed_out: METRIC.flowRunsTimedOut,
} as const satisfies Record<FlowResult['status'], string>;

/**
 * A `FlowRunner` that counts each run's outcome and duration by flow (a deployed flow's name: a
 * bounded set). A run that could not start (Step Functions unreachable) throws and counts nothing.
 */
export class MeteredFlowRunner implements FlowRunner {
  constructor(
    private readonly inner: FlowRunner,
    private readonly metrics: MetricsRecorder,
    private readonly nowMs: () => number = () => performance.now(),
  ) {}

  async run(flow: string, inputJson: string, options: { timeoutMs: number; name?: string }): Promise<FlowResult> {
    const startedAt = this.nowMs();
    const result = await this.inner.run(flow, inputJson, options);
    const dimension = { name: METRIC_DIMENSION.flow, value: flow };
    this.metrics.count(OUTCOME_METRIC[result.status], 1, dimension);
    this.metrics.milliseconds(METRIC.flowRunDuration, Math.round(this.nowMs() - startedAt), dimension);
    return result;
  }
}
