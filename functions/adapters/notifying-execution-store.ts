import type { BatchRequestLink, ExecutionRef, ExecutionStore, NewExecution, StoredRequest } from '../domain/flows/ports.js';
import type { DeliveryListeners } from '../domain/listen/ports.js';
import { ForwardingExecutionStore } from './forwarding-execution-store.js';

/**
 * An `ExecutionStore` that tells the listeners (`flowgate listen`) of each delivery once its record
 * is written, so what they are pushed is what the inspector reads, and nothing is pushed that a
 * failed write left unrecorded. The receiver's stages are unchanged: it wraps their store.
 */
export class NotifyingExecutionStore extends ForwardingExecutionStore {
  constructor(inner: ExecutionStore, private readonly listeners: DeliveryListeners) {
    super(inner);
  }

  async record(ref: ExecutionRef, execution: NewExecution, request?: StoredRequest | BatchRequestLink): Promise<void> {
    await this.inner.record(ref, execution, request);
    await this.listeners.recorded(ref);
  }

  /** The first write that is also the replay claim: pushed only when it was written (a replay's is not). */
  async recordFirst(ref: ExecutionRef, execution: NewExecution, request: StoredRequest): Promise<boolean> {
    const written = await this.inner.recordFirst(ref, execution, request);
    if (written) await this.listeners.recorded(ref);
    return written;
  }
}
