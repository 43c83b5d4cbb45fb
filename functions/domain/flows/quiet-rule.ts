import type { Clock } from '../clock.js';

/**
 * How far back a receiver environment looks at a trigger's deliveries to judge it quiet.
 *
 * Why a second and eight: the flow worker's event source mapping has no batching window
 * (`lib/constructs/event-queues.ts`), so a poller hands the worker whatever is visible when its
 * long poll returns: a message waits for company only while every poller is busy with a batch.
 * One batch (a worker invocation, an express execution, a record write) takes about 100-150 ms
 * deployed, so events that arrive a batch's length apart or more travel alone anyway, one to an
 * invocation and one to an execution, and the queue only adds its send, receive and delete. Below
 * about eight a second (one every 125 ms) a trigger is in that range; at or above it, batches of
 * several events start to form, and the busy bench's batches hold about eight events. A receiver
 * environment answers one request at a time, so what it sees is a lower bound of the trigger's
 * rate: a trigger busy across several environments counts as quiet in none of them for long.
 */
export const QUIET_WINDOW_MS = 1_000;
/** A trigger is quiet in an environment while fewer than this many of its deliveries arrived there within {@link QUIET_WINDOW_MS}. */
export const QUIET_MAX_DELIVERIES = 8;
/** Triggers remembered per environment; the one seen longest ago is forgotten first (and so counts as quiet again). */
export const QUIET_RULE_MAX_TRIGGERS = 1_000;

/**
 * Judges, per trigger and in this execution environment, whether the next delivery is quiet enough
 * to go straight to the flow worker (`direct-first-queue.ts`) or should go through the flow queue,
 * whose batches make a busy trigger cheaper. In-process and approximate by design: nothing is
 * written for it, and being wrong costs cents per million either way, never an event.
 */
export class QuietRule {
  /** Trigger id → arrival times (epoch ms) within the window, oldest first; Map order is recency of use. */
  private readonly arrivals = new Map<string, number[]>();

  constructor(private readonly now: Clock, private readonly options: { windowMs?: number; maxDeliveries?: number; maxTriggers?: number } = {}) {}

  /** Notes a delivery of `triggerId` now; true when it is quiet (fewer than the limit arrived before it within the window). */
  arrive(triggerId: string): boolean {
    const now = this.now();
    const windowMs = this.options.windowMs ?? QUIET_WINDOW_MS;
    const seen = (this.arrivals.get(triggerId) ?? []).filter((at) => now - at < windowMs);
    const quiet = seen.length < (this.options.maxDeliveries ?? QUIET_MAX_DELIVERIES);
    seen.push(now);
    // Only the latest `maxDeliveries` times matter: the list never grows past that.
    if (seen.length > (this.options.maxDeliveries ?? QUIET_MAX_DELIVERIES)) seen.shift();
    this.arrivals.delete(triggerId);
    this.arrivals.set(triggerId, seen);
    if (this.arrivals.size > (this.options.maxTriggers ?? QUIET_RULE_MAX_TRIGGERS)) this.arrivals.delete(this.arrivals.keys().next().value!);
    return quiet;
  }

  /** Triggers remembered now (bounded by `maxTriggers`). */
  get size(): number {
    return this.arrivals.size;
  }
}
