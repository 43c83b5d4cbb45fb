import type { ConsumerConfig, MessageMark, StreamConfig, StreamHead } from './types.js';

/**
 * The pure arithmetic of a stream's log: how far the committed watermark may move, what
 * retention drops, what a `discard: new` stream refuses, and when a pending message is due again.
 * The use cases (`service.ts`, `consumers.ts`) read and write; these only decide.
 */

/** Messages and bytes in the stream, as its head says. */
export const countsOf = (head: StreamHead) => ({
  messages: Math.max(0, head.lastSeq - head.firstSeq + 1),
  bytes: head.lastBytes - head.droppedBytes,
});

export interface CommitStep {
  /** The new watermark: every sequence up to it is written or skipped. */
  lastSeq: number;
  lastBytes: number;
  lastTs: number | null;
  /** Sequences to record as skipped before the watermark may pass them. */
  skip: number[];
}

/**
 * How far the watermark can move over `marks`, the messages found after `head.lastSeq` (ascending,
 * up to `upTo`). It moves over each sequence in turn while that sequence is written. A missing
 * sequence stops it, unless its publisher is certainly gone: its reservation is older than
 * `leaseMs` (a publisher does not write once its reservation is older than its own deadline,
 * which the lease exceeds). Reservations are handed out in sequence order, so a missing
 * sequence's reservation is no younger than the latest reservation, nor than any message written
 * after it: either one older than the lease proves it.
 *
 *   reserve 7 ─ (publisher dies)
 *   reserve 8 ─ write 8 ─ commit: 7 missing, 8 is 1 s old: wait
 *   … a lease later: 7 missing, 8 older than the lease: skip 7, commit 8
 */
export function commitStep(head: StreamHead, marks: readonly MessageMark[], upTo: number, now: number, leaseMs: number): CommitStep {
  const step: CommitStep = { lastSeq: head.lastSeq, lastBytes: head.lastBytes, lastTs: head.lastTs, skip: [] };
  const bySeq = new Map(marks.map((mark) => [mark.seq, mark]));
  const oldestAfter: number[] = [];
  // The oldest write at or after each position, so that a hole can be judged by what follows it.
  let oldest = Infinity;
  for (let i = marks.length - 1; i >= 0; i--) oldestAfter[i] = oldest = Math.min(oldest, marks[i]!.ts);
  const reservationsExpired = now - head.reservedAt > leaseMs;
  let next = 0;
  for (let seq = head.lastSeq + 1; seq <= upTo; seq++) {
    while (next < marks.length && marks[next]!.seq < seq) next++;
    const mark = bySeq.get(seq);
    if (mark) {
      step.lastSeq = seq;
      step.lastBytes += mark.size;
      if (!mark.skipped) step.lastTs = Math.max(step.lastTs ?? 0, mark.ts);
      continue;
    }
    const followedByOld = next < marks.length && now - oldestAfter[next]! > leaseMs;
    if (!reservationsExpired && !followedByOld) break;
    step.skip.push(seq);
    step.lastSeq = seq;
  }
  return step;
}

/**
 * The first sequence retention keeps (`discard: old`, and `max_age_seconds` for both policies),
 * with the bytes dropped below it. `marks` are the stream's oldest messages from `head.firstSeq`,
 * ascending; the result stays within them, so a long run to drop takes more than one step.
 */
export function retentionStep(head: StreamHead, config: StreamConfig, marks: readonly MessageMark[], now: number): { firstSeq: number; droppedBytes: number } {
  let { firstSeq, droppedBytes } = head;
  const minFirst = config.discard === 'old' && config.maxMsgs !== null ? head.lastSeq - config.maxMsgs + 1 : 0;
  const oldestKept = config.maxAgeSeconds === null ? -Infinity : now - config.maxAgeSeconds * 1000;
  for (const mark of marks) {
    if (mark.seq !== firstSeq || mark.seq > head.lastSeq) break;
    const bytes = head.lastBytes - droppedBytes;
    const overBytes = config.discard === 'old' && config.maxBytes !== null && bytes > config.maxBytes;
    const tooOld = !mark.skipped && mark.ts < oldestKept;
    if (!(firstSeq < minFirst || overBytes || tooOld || mark.skipped)) break;
    firstSeq++;
    droppedBytes += mark.size;
  }
  return { firstSeq, droppedBytes };
}

/** Whether a `discard: new` stream refuses `count` more messages of `bytes` (count and size limits only). */
export function refusesNew(head: StreamHead, config: StreamConfig, count: number, bytes: number): boolean {
  if (config.discard !== 'new') return false;
  if (config.maxMsgs !== null && head.reserved + count - head.firstSeq + 1 > config.maxMsgs) return true;
  return config.maxBytes !== null && head.reservedBytes + bytes - head.droppedBytes > config.maxBytes;
}

/** Whether a message written at `ts` has outlived the stream's `max_age_seconds` at `now` (hidden from reads). */
export const isExpired = (config: StreamConfig, ts: number, now: number): boolean =>
  config.maxAgeSeconds !== null && ts < now - config.maxAgeSeconds * 1000;

/**
 * Seconds a message waits for its acknowledgement after its `deliveries`-th delivery before it is
 * delivered again: `backoff_seconds[deliveries - 1]` (the last step repeating), else `ack_wait_seconds`.
 */
export function ackWaitAfter(config: ConsumerConfig, deliveries: number): number {
  const steps = config.backoffSeconds;
  if (steps.length === 0) return config.ackWaitSeconds;
  return steps[Math.min(deliveries, steps.length) - 1]!;
}

/** Sort keys of sequences: zero-padded so that text order is number order. */
export const SEQ_DIGITS = 16;
export const seqKey = (seq: number): string => String(seq).padStart(SEQ_DIGITS, '0');
