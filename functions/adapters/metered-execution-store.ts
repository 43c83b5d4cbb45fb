import type {
  Execution, ExecutionChange, ExecutionFilter, ExecutionRef, ExecutionStore, NewExecution, StoredRequest,
} from '../domain/flows/ports.js';
import { METRIC, type MetricName } from '../shared/metric-names.js';
import type { MetricsRecorder } from '../shared/metrics.js';

/**
 * What the receiver's first record of a delivery says about it: queued (acknowledge mode) or
 * running (wait mode) is an accepted delivery; ignored and duplicate are their own.
 */
const RECORDED_METRIC: Partial<Record<Execution['status'], MetricName>> = {
  queued: METRIC.webhooksAccepted,
  running: METRIC.webhooksAccepted,
  ignored: METRIC.webhooksIgnored,
  duplicate: METRIC.webhooksDuplicate,
};

/**
 * The receiver's `ExecutionStore`, counting each delivery by how it is first recorded, once the
 * record is written. (An acknowledged delivery the queue then refuses is counted accepted and,
 * by its 503, refused as `unavailable`.)
 */
export class MeteredExecutionStore implements ExecutionStore {
  constructor(private readonly inner: ExecutionStore, private readonly metrics: MetricsRecorder) {}

  async record(ref: ExecutionRef, execution: NewExecution, request?: StoredRequest): Promise<void> {
    await this.inner.record(ref, execution, request);
    const name = RECORDED_METRIC[execution.status];
    if (name) this.metrics.count(name);
  }

  discard(ref: ExecutionRef, eventId: string): Promise<void> { return this.inner.discard(ref, eventId); }
  update(ref: ExecutionRef, change: ExecutionChange): Promise<void> { return this.inner.update(ref, change); }
  get(ref: ExecutionRef) { return this.inner.get(ref); }
  requestOf(ref: ExecutionRef, eventId: string) { return this.inner.requestOf(ref, eventId); }
  list(triggerId: string, filter: ExecutionFilter, page: { limit: number; cursor?: string }) { return this.inner.list(triggerId, filter, page); }
  countRefusal(triggerId: string, minute: number, max: number): Promise<boolean> { return this.inner.countRefusal(triggerId, minute, max); }
  claimEvent(triggerId: string, eventId: string, ttlSeconds: number): Promise<boolean> { return this.inner.claimEvent(triggerId, eventId, ttlSeconds); }
  releaseEvent(triggerId: string, eventId: string): Promise<void> { return this.inner.releaseEvent(triggerId, eventId); }
  storePayload(id: string, payload: string) { return this.inner.storePayload(id, payload); }
  loadPayload(ref: { id: string; chunks: number }): Promise<string> { return this.inner.loadPayload(ref); }
}
