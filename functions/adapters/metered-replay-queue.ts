import type { EventQueue } from '../domain/flows/ports.js';
import { METRIC } from '../shared/metric-names.js';
import type { MetricsRecorder } from '../shared/metrics.js';

/**
 * The triggers function's flow queue, which only replays send to: each message the queue took is
 * a replay started, counted as `DeliveriesReplayed`. One the queue refused throws and counts nothing.
 */
export class MeteredReplayQueue implements EventQueue {
  constructor(private readonly inner: EventQueue, private readonly metrics: MetricsRecorder) {}

  async send(body: string): Promise<void> {
    await this.inner.send(body);
    this.metrics.count(METRIC.deliveriesReplayed);
  }
}
