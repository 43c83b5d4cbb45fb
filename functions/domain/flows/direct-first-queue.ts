import type { EventQueue, WorkerInvoker } from './ports.js';
import type { QuietRule } from './quiet-rule.js';

/**
 * Flow messages above this go through the queue even when quiet: a direct invocation whose worker
 * fails reaches the flow queue as Lambda's destination record, which wraps the message with the
 * invocation's context and the error (`requestPayload`, `responsePayload`), and the record must
 * still fit an SQS message (256 KiB); Lambda's asynchronous invocations take 256 KiB too.
 */
export const MAX_DIRECT_MESSAGE_BYTES = 128 * 1024;

/**
 * The flow queue as the receiver sends to it: a quiet trigger's message goes straight to the flow
 * worker (an asynchronous invocation, which Lambda holds durably once it answers), a busy
 * trigger's to the queue, where it is batched with others. A direct attempt that fails in any way
 * (refused, throttled, unreachable) falls back to the queue, so the sender's 200 still waits for
 * one of the two to hold the event. The worker retries a failed direct run through the queue
 * (`run-queued-flow.ts`), and Lambda sends a crashed one there (its on-failure destination).
 */
export class DirectFirstQueue implements EventQueue {
  constructor(private readonly deps: { queue: EventQueue; worker: WorkerInvoker; rule: QuietRule; onFallback?: (error: unknown) => void }) {}

  async send(body: string, about?: { triggerId: string }): Promise<void> {
    if (about && this.deps.rule.arrive(about.triggerId) && Buffer.byteLength(body) <= MAX_DIRECT_MESSAGE_BYTES) {
      try {
        await this.deps.worker.invoke(body);
        return;
      } catch (error) {
        this.deps.onFallback?.(error);
      }
    }
    await this.deps.queue.send(body, about);
  }
}
