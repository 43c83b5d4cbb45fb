import type { RefusalOutcome } from '../domain/flows/ports.js';
import type { RefusalGate } from '../domain/webhooks/refusal-budget.js';
import { METRIC } from '../shared/metric-names.js';
import type { MetricsRecorder } from '../shared/metrics.js';

/**
 * The receiver's refusal budget, seen by the metrics: every refusal (or handshake) it is asked
 * about names its trigger on the invocation's metric line, which is that refusal's log entry
 * (reason, trigger, request id), and one it does not let through is counted as
 * `WebhookRefusalsNotRecorded`: past the budget, the metric and the line are all that is kept.
 */
export class MeteredRefusalBudget implements RefusalGate {
  constructor(private readonly inner: RefusalGate, private readonly metrics: MetricsRecorder) {}

  async take(triggerId: string, nowMs: number, outcome?: RefusalOutcome): Promise<boolean> {
    this.metrics.note?.('trigger', triggerId);
    const granted = await this.inner.take(triggerId, nowMs, outcome);
    if (!granted) this.metrics.count(METRIC.webhookRefusalsNotRecorded);
    return granted;
  }

  giveBack(triggerId: string, nowMs: number, outcome?: RefusalOutcome): Promise<void> {
    return this.inner.giveBack(triggerId, nowMs, outcome);
  }
}
