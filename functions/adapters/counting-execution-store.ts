import type {
  ExecutionChange, ExecutionRef, ExecutionStatus, ExecutionStore, NewExecution, ReplacingUpdate, StoredRequest, BatchRequestLink,
} from '../domain/flows/ports.js';
import { ForwardingExecutionStore } from './forwarding-execution-store.js';
import { countOfChange, countOfRecord } from '../domain/stats/outcomes.js';
import type { DeliveryCounter } from '../domain/stats/tally.js';

/**
 * An `ExecutionStore` that counts each delivery by outcome as its record is written
 * (`countOfRecord`, `countOfChange`), once the write is done: what is counted is what the
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
   * A written change moves the counts from what the record counted as to what it counts as now
   * (`countOfChange`, from the state the write replaced); a change not written (a later attempt's
   * outcome recorded already, or the record `succeeded`) moves nothing: the counts stay those of
   * the records, whatever order copies of one event write in.
   */
  async updateReplacing(ref: ExecutionRef, change: ExecutionChange): Promise<ReplacingUpdate> {
    const answer = await this.inner.updateReplacing(ref, change);
    if (answer.result === 'written') {
      // A success written over a later attempt keeps that attempt's number; it counts as a success all the same.
      await this.counter.count(ref, countOfChange(answer.replaced, { status: change.status, attempts: Math.max(change.attempts, answer.replaced.attempts) }));
    }
    return answer;
  }
}
