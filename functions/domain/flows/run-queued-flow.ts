import type { Clock } from '../clock.js';
import { retryAfterDirect } from './direct-retry.js';
import { DEFAULT_RETRY_BASE_SECONDS, MAX_RETRY_DELAY_SECONDS } from './limits.js';
import { parseFlowMessage, type FlowMessage } from './message.js';
import type { ExecutionRef, ExecutionStore, FlowRunner, Redelivery, RetryQueue } from './ports.js';

export { DEFAULT_RETRY_BASE_SECONDS, MAX_RETRY_DELAY_SECONDS };

/**
 * A run still going after this long is recorded `running`; a shorter one goes straight from
 * `queued` to its outcome. Most flows end in tens of milliseconds, and a `running` write that
 * nobody reads before the outcome replaces it cost one write unit per event (a fifth of an
 * acknowledged event's DynamoDB bill); a long run still shows that it started.
 */
export const RUNNING_MARK_AFTER_MS = 1_000;

export interface WorkerDeps {
  executions: ExecutionStore;
  flows: FlowRunner;
  redelivery: Redelivery;
  /** Where a failed direct attempt's retry goes (the flow queue); needed only by direct deliveries. */
  retries?: RetryQueue;
  /**
   * The flow queue's dead-letter queue, where the worker itself puts a message whose last attempt
   * failed (`deadLetterMessage`). Absent, or when that send fails, the queue's own redrive policy
   * moves it there, with its attempts uncounted.
   */
  deadLetters?: RetryQueue;
  /** Receives before the queue moves a message to its dead-letter queue. */
  maxReceiveCount: number;
  /** Delay before the first retry; each later one doubles it. */
  retryBaseSeconds: number;
  now: Clock;
  /** Waits `ms`, then calls `then`; returns a cancel. Default: a timer that does not hold the process open. */
  after?: (ms: number, then: () => void) => () => void;
}

const timerAfter = (ms: number, then: () => void) => {
  const timer = setTimeout(then, ms);
  timer.unref?.();
  return () => clearTimeout(timer);
};

export interface QueuedDelivery {
  body: string;
  /** Absent for a direct invocation of the worker (`direct-first-queue.ts`): its retry is sent to the queue. */
  receiptHandle?: string;
  /** SQS's `ApproximateReceiveCount`: 1 on the first delivery (and for a direct one). */
  receiveCount: number;
  timeoutMs: number;
}

/**
 * Thrown so the event source redelivers this message (and only this one) later. `handedBack`: a
 * direct attempt's retry is on the flow queue already, so the invocation itself succeeded.
 */
export class FlowAttemptFailed extends Error {
  constructor(readonly attempt: number, readonly reason: string, readonly handedBack = false) {
    super(`flow attempt ${attempt} failed: ${reason}`);
    this.name = 'FlowAttemptFailed';
  }
}

/** The reason given for a message whose attempts were all used before the queue's own count ran out. */
export const ATTEMPTS_EXHAUSTED = 'attempts_exhausted';

/**
 * The message the worker puts on the dead-letter queue after `attempts` attempts in all: counted in
 * `attempts_before`, so a redrive of it (a new message to SQS, its receive count starting again at
 * 1) goes on numbering them (attempt `attempts + 1`, …) and its outcomes are recorded, not refused
 * as older than the record's. `direct_attempts` is dropped: a redriven event has the queue's
 * `maxReceiveCount` attempts again, all of them through the queue.
 */
export function deadLetterMessage(message: FlowMessage, attempts: number): string {
  const { direct_attempts: _, ...rest } = message;
  return JSON.stringify({ ...rest, attempts_before: attempts } satisfies FlowMessage);
}

/** Seconds before the retry that follows failed attempt `attempt` (1-based). */
export const retryDelaySeconds = (attempt: number, baseSeconds: number): number =>
  Math.min(MAX_RETRY_DELAY_SECONDS, baseSeconds * 2 ** (attempt - 1));

/**
 * Runs one queued event's flow and records the outcome. A failed run throws, so the event source
 * reports the message failed and leaves it on the queue; before that, its visibility is set so it
 * comes back after a backoff of seconds to minutes (not after the queue's visibility timeout, six
 * times the worker's), and the record shows `queued` with the error and `next_attempt_at`:
 *
 *   attempt 1 fails ── 15 s ── attempt 2 fails ── 30 s ── … ── attempt N fails ── sent to the DLQ
 *
 * The failure of the last allowed receive is recorded as `failed`, and then the worker sends the
 * message to the dead-letter queue itself (`deadLetterMessage`, its attempts counted) and returns,
 * so the event source deletes the original. SQS's own move would not do: a redrive makes a new
 * message whose receive count starts again at 1, so its attempts would be numbered 1, 2, … again
 * and every outcome refused as older than the record's `failed` attempt N. Only when that send
 * fails is the message made visible at once and thrown, so SQS moves it on its next receive
 * (uncounted). Resolves to the last attempt's failure when the message was dead-lettered (for the
 * log), else to nothing.
 *
 * One event may run as two copies (at least once: a direct invocation whose answer was lost and its
 * queued fallback, a message redelivered while its run went on). A success is final in the record
 * (`ExecutionStore.update`), so a copy whose failure finds it there, or whose retry does (read
 * before a retry runs), is acknowledged and never runs the flow again.
 */
export async function runQueuedFlow(deps: WorkerDeps, delivery: QueuedDelivery): Promise<FlowAttemptFailed | undefined> {
  const message = parseFlowMessage(delivery.body);
  // A message the local stack queued again after a restart goes on from the attempts already made.
  const attempt = (message.attempts_before ?? 0) + delivery.receiveCount;
  // Attempts against the queue's maxReceiveCount: its receives, and the direct attempts before them.
  const spent = (message.direct_attempts ?? 0) + delivery.receiveCount;
  // A retry (or a redelivery) of an event another copy of which has succeeded since: acknowledged
  // unrun. Only a retry pays this read; a first attempt goes straight to its run.
  if (attempt > 1 && await succeededAlready(deps.executions, message.ref)) return undefined;
  if (spent > deps.maxReceiveCount && delivery.receiptHandle !== undefined) {
    // Its last attempt ran (and was recorded `failed`) while the queue still had a receive to give
    // (its dead-letter send had failed): dead-lettered unrun, with the attempts made (this one is
    // not); or, failing that, handed back at once so the queue moves it on the next.
    if (await sentToDeadLetters(deps, message, attempt - 1)) return new FlowAttemptFailed(attempt - 1, ATTEMPTS_EXHAUSTED);
    await deps.redelivery.delay(delivery.receiptHandle, 0).catch(() => undefined);
    throw new FlowAttemptFailed(attempt, ATTEMPTS_EXHAUSTED);
  }
  const inputJson = message.input ? JSON.stringify(message.input) : await deps.executions.loadPayload(message.payload!);
  const started_at = new Date(deps.now()).toISOString();
  // Marked running only if the run outlasts RUNNING_MARK_AFTER_MS; the outcome waits for that
  // write, so the mark can never land after the outcome and replace it.
  let marking: Promise<unknown> | undefined;
  const cancelMark = (deps.after ?? timerAfter)(RUNNING_MARK_AFTER_MS, () => {
    marking = deps.executions.update(message.ref, { status: 'running', attempts: attempt, attempt: { attempt, started_at, status: 'running' } }).catch(() => undefined);
  });
  let result;
  try {
    result = await deps.flows.run(message.flow, inputJson, { timeoutMs: delivery.timeoutMs });
  } finally {
    cancelMark();
    await marking;
  }
  const finished_at = new Date(deps.now()).toISOString();
  if (result.status === 'succeeded') {
    await deps.executions.update(message.ref, { status: 'succeeded', attempts: attempt, output: result.output, attempt: { attempt, started_at, finished_at, status: 'succeeded' } });
    return undefined;
  }
  const reason = result.status === 'failed' ? result.error : 'flow_timeout';
  const last = spent >= deps.maxReceiveCount;
  const delaySeconds = last ? 0 : retryDelaySeconds(spent, deps.retryBaseSeconds);
  let nextAttemptAt: string | undefined;
  let handedBack = false;
  const handBack = async () => {
    try {
      if (delivery.receiptHandle !== undefined) {
        await deps.redelivery.delay(delivery.receiptHandle, delaySeconds);
      } else {
        // A direct attempt: its retry goes on the queue, where the attempts, the backoff and the
        // dead-letter queue go on as for any queued event.
        if (!deps.retries) throw new Error('no retry queue for a direct delivery');
        await deps.retries.requeue(retryAfterDirect(message, 1), delaySeconds);
        handedBack = true;
      }
      if (!last) nextAttemptAt = new Date(deps.now() + delaySeconds * 1000).toISOString();
    } catch {
      // The message still comes back, after the queue's visibility timeout instead (or, for a direct
      // attempt, through Lambda's on-failure destination once the worker throws); the record then
      // shows no time it cannot promise.
    }
  };
  // The last attempt's message is handed on once its failure is recorded: not at all when another
  // copy of the event has succeeded.
  if (!last) await handBack();
  try {
    const recorded = await deps.executions.update(message.ref, {
      status: last ? 'failed' : 'queued',
      attempts: attempt,
      error: reason,
      nextAttemptAt,
      attempt: { attempt, started_at, finished_at, status: result.status, error: reason },
    });
    // Another copy of the event succeeded: this copy's failure changes nothing, and needs no retry
    // (the message is acknowledged; a retry already on the queue finds the success and stops).
    if (recorded === 'succeeded_already') return undefined;
  } catch (error) {
    // A direct attempt's retry is on the queue already: were this thrown as it is, the worker would
    // fail the invocation and Lambda's destination would queue a second retry of the same event.
    // The retry records its own attempt; this one is only not shown.
    if (!handedBack) throw error;
  }
  const failure = new FlowAttemptFailed(attempt, reason, handedBack);
  if (last) {
    // Only the last failure sends anything more: one message, to the dead-letter queue.
    if (await sentToDeadLetters(deps, message, attempt)) return failure;
    await handBack();
  }
  // Made again: the hand-back just above may have put a direct attempt's retry on the queue.
  throw new FlowAttemptFailed(attempt, reason, handedBack);
}

/** Puts the message on the dead-letter queue after `attempts` attempts; false when there is none or it would not take it. */
async function sentToDeadLetters(deps: WorkerDeps, message: FlowMessage, attempts: number): Promise<boolean> {
  if (!deps.deadLetters) return false;
  return deps.deadLetters.requeue(deadLetterMessage(message, attempts), 0).then(() => true, () => false);
}

/** True when the record says `succeeded`; false when it does not, or cannot be read (the run then goes on: at least once). */
async function succeededAlready(executions: ExecutionStore, ref: ExecutionRef): Promise<boolean> {
  try {
    return (await executions.statusOf(ref)) === 'succeeded';
  } catch {
    return false;
  }
}
