import type {
  ExecutionChange, ExecutionFilter, ExecutionUpdate, ReplacingUpdate, ExecutionRef, ExecutionStore, NewExecution, StoredRequest, BatchRequestLink, RefusalOutcome,
} from '../domain/flows/ports.js';

/**
 * An `ExecutionStore` that hands every call to `inner`: the base of the decorators that add
 * something to a few calls (metrics, delivery counts) and must pass the rest through unchanged.
 */
export class ForwardingExecutionStore implements ExecutionStore {
  constructor(protected readonly inner: ExecutionStore) {}

  record(ref: ExecutionRef, execution: NewExecution, request?: StoredRequest | BatchRequestLink): Promise<void> { return this.inner.record(ref, execution, request); }
  recordFirst(ref: ExecutionRef, execution: NewExecution, request: StoredRequest): Promise<boolean> { return this.inner.recordFirst(ref, execution, request); }
  storeRequest(ref: ExecutionRef, request: StoredRequest): Promise<void> { return this.inner.storeRequest(ref, request); }
  /** `updateReplacing`'s result: a decorator that does something with a change overrides that one method, and both calls pass through it. */
  async update(ref: ExecutionRef, change: ExecutionChange): Promise<ExecutionUpdate> { return (await this.updateReplacing(ref, change)).result; }
  updateReplacing(ref: ExecutionRef, change: ExecutionChange): Promise<ReplacingUpdate> { return this.inner.updateReplacing(ref, change); }
  statusOf(ref: ExecutionRef) { return this.inner.statusOf(ref); }
  discard(ref: ExecutionRef, eventId: string): Promise<void> { return this.inner.discard(ref, eventId); }
  get(ref: ExecutionRef) { return this.inner.get(ref); }
  requestOf(ref: ExecutionRef, eventId: string) { return this.inner.requestOf(ref, eventId); }
  list(triggerId: string, filter: ExecutionFilter, page: { limit: number; cursor?: string }) { return this.inner.list(triggerId, filter, page); }
  countRefusal(triggerId: string, minute: number, max: number, outcome?: RefusalOutcome): Promise<boolean> { return this.inner.countRefusal(triggerId, minute, max, outcome); }
  uncountRefusal(triggerId: string, minute: number, outcome?: RefusalOutcome): Promise<void> { return this.inner.uncountRefusal(triggerId, minute, outcome); }
  claimEvent(triggerId: string, eventId: string, ttlSeconds: number): Promise<boolean> { return this.inner.claimEvent(triggerId, eventId, ttlSeconds); }
  releaseEvent(triggerId: string, eventId: string): Promise<void> { return this.inner.releaseEvent(triggerId, eventId); }
  storePayload(id: string, payload: string) { return this.inner.storePayload(id, payload); }
  loadPayload(ref: { id: string; chunks: number }): Promise<string> { return this.inner.loadPayload(ref); }
}
