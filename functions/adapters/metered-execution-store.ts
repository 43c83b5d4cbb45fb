import type {
  Execution, ExecutionRef, ExecutionStore, NewExecution, StoredRequest, BatchRequestLink,
} from '../domain/flows/ports.js';
import { ForwardingExecutionStore } from './forwarding-execution-store.js';
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
export class MeteredExecutionStore extends ForwardingExecutionStore {
  constructor(inner: ExecutionStore, private readonly metrics: MetricsRecorder) {
    super(inner);
  }

  async record(ref: ExecutionRef, execution: NewExecution, request?: StoredRequest | BatchRequestLink): Promise<void> {
    await this.inner.record(ref, execution, request);
    this.counted(execution);
  }

  async recordFirst(ref: ExecutionRef, execution: NewExecution, request: StoredRequest): Promise<boolean> {
    const written = await this.inner.recordFirst(ref, execution, request);
    if (written) this.counted(execution);
    return written;
  }

  private counted(execution: NewExecution) {
    const name = RECORDED_METRIC[execution.status];
    if (name) this.metrics.count(name);
  }
}
