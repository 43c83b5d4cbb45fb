import type {
  ExecutionChange, ExecutionFilter, ExecutionRef, ExecutionStore, NewExecution, StoredRequest,
} from '../domain/flows/ports.js';
import { countOfRecord, countOfUpdate } from '../domain/stats/outcomes.js';
import type { DeliveryCounter } from '../domain/stats/tally.js';

/**
 * An `ExecutionStore` that counts each delivery by outcome as its record is written
 * (`countOfRecord`, `countOfUpdate`), once the write is done: what is counted is what the
 * deliveries list shows. The receiver counts each delivery at once; the flow worker gathers a
 * batch's and writes them together (`StatsTally`).
 */
export class CountingExecutionStore implements ExecutionStore {
  constructor(private readonly inner: ExecutionStore, private readonly counter: DeliveryCounter) {}

  async record(ref: ExecutionRef, execution: NewExecution, request?: StoredRequest): Promise<void> {
    await this.inner.record(ref, execution, request);
    await this.counter.count(ref, countOfRecord(execution.status));
  }

  async update(ref: ExecutionRef, change: ExecutionChange): Promise<void> {
    await this.inner.update(ref, change);
    await this.counter.count(ref, countOfUpdate(change));
  }

  discard(ref: ExecutionRef, eventId: string): Promise<void> { return this.inner.discard(ref, eventId); }
  get(ref: ExecutionRef) { return this.inner.get(ref); }
  requestOf(ref: ExecutionRef, eventId: string) { return this.inner.requestOf(ref, eventId); }
  list(triggerId: string, filter: ExecutionFilter, page: { limit: number; cursor?: string }) { return this.inner.list(triggerId, filter, page); }
  countRefusal(triggerId: string, minute: number, max: number): Promise<boolean> { return this.inner.countRefusal(triggerId, minute, max); }
  claimEvent(triggerId: string, eventId: string, ttlSeconds: number): Promise<boolean> { return this.inner.claimEvent(triggerId, eventId, ttlSeconds); }
  releaseEvent(triggerId: string, eventId: string): Promise<void> { return this.inner.releaseEvent(triggerId, eventId); }
  storePayload(id: string, payload: string) { return this.inner.storePayload(id, payload); }
  loadPayload(ref: { id: string; chunks: number }): Promise<string> { return this.inner.loadPayload(ref); }
}
