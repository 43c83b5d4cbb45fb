import type {
  ExecutionChange, ExecutionRef, ExecutionStatus, ExecutionStore, ExecutionUpdate, NewExecution, StoredRequest, BatchRequestLink,
} from '../domain/flows/ports.js';
import { ForwardingExecutionStore } from './forwarding-execution-store.js';
import { countOfRecord, countOfUpdate } from '../domain/stats/outcomes.js';
import type { DeliveryCounter } from '../domain/stats/tally.js';

/**
 * An `ExecutionStore` that counts each delivery by outcome as its record is written
 * (`countOfRecord`, `countOfUpdate`), once the write is done: what is counted is what the
 * deliveries list shows. The receiver counts each delivery at once; the flow worker gathers a
 * batch's and writes them together (`StatsTally`).
 */
export class CountingExecutionStore extends ForwardingExecutionStore {
  /**
   * @param countedBefore statuses whose records were counted before they were written: the
   * receiver's refused and handshake records, counted by the refusal budget's grant
   * (`ExecutionStore.countRefusal`).
   */
  constructor(inner: ExecutionStore, private readonly counter: DeliveryCounter, private readonly countedBefore: ReadonlySet<ExecutionStatus> = new Set()) {
    super(inner);
  }

  async record(ref: ExecutionRef, execution: NewExecution, request?: StoredRequest | BatchRequestLink): Promise<void> {
    await this.inner.record(ref, execution, request);
    if (!this.countedBefore.has(execution.status)) await this.counter.count(ref, countOfRecord(execution.status));
  }

  async recordFirst(ref: ExecutionRef, execution: NewExecution, request: StoredRequest): Promise<boolean> {
    const written = await this.inner.recordFirst(ref, execution, request);
    if (written) await this.counter.count(ref, countOfRecord(execution.status));
    return written;
  }

  /**
   * A change is counted whether it was written or came too late (`countOfUpdate` takes a retry's
   * outcome out of `queued` on the word of the attempt before it, late or not), except a change
   * that found the record `succeeded`: the write that made it so counted the delivery, and a copy of
   * the event that failed afterwards (even under the same attempt number) adds nothing.
   */
  async update(ref: ExecutionRef, change: ExecutionChange): Promise<ExecutionUpdate> {
    const result = await this.inner.update(ref, change);
    if (result !== 'succeeded_already') await this.counter.count(ref, countOfUpdate(change));
    return result;
  }
}
