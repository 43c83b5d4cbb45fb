import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';

/** What `GET /health` shows of the flow queue on the local stack. */
export interface FlowBacklogReading {
  /** Acknowledged events whose flow has not run to an outcome yet: queued, running, or waiting out a retry's backoff. */
  waiting: number;
  /** Seconds since the oldest of them was queued; null when none waits. */
  oldest_age_seconds: number | null;
}

/**
 * The local stack's own ledger of the flow queue's messages: every message sent to it (by the
 * receiver, a replay, or the recovery after a restart) is noted with its time, and struck off
 * when the worker is done with it (deleted, or failed for the last time, which the queue then
 * moves to its dead-letter queue). The local stack runs every sender and the only consumer in
 * one process, so the ledger is exact, and reading it costs nothing: SQS's own counts are
 * approximate and it keeps no age of its oldest message but as a CloudWatch metric.
 */
const MAX_SETTLED_EARLY = 10_000;

export class FlowBacklog {
  /** Message id → when it was queued (epoch ms); insertion order is sending order. */
  private readonly queued = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Notes every message the client sends to `queueUrl`; call before anything sends. */
  watch(sqs: SQSClient, queueUrl: string): void {
    watchSends(sqs, queueUrl, (messageId) => this.sent(messageId));
  }

  /**
   * Ids settled before their send was noted: the worker (on its own thread) can receive and finish
   * a message before the sender's answer from the queue has been read here. Bounded; oldest go first.
   */
  private readonly settledEarly = new Set<string>();

  sent(messageId: string): void {
    if (this.settledEarly.delete(messageId)) return;
    if (!this.queued.has(messageId)) this.queued.set(messageId, this.now());
  }

  done(messageId: string): void {
    if (this.queued.delete(messageId)) return;
    this.settledEarly.add(messageId);
    if (this.settledEarly.size > MAX_SETTLED_EARLY) this.settledEarly.delete(this.settledEarly.values().next().value!);
  }

  read(): FlowBacklogReading {
    const oldest = this.queued.values().next();
    return {
      waiting: this.queued.size,
      oldest_age_seconds: oldest.done ? null : Math.max(0, Math.floor((this.now() - oldest.value) / 1000)),
    };
  }
}

/** Calls `onSent` with the id of every message `sqs` sends to `queueUrl`. */
export function watchSends(sqs: SQSClient, queueUrl: string, onSent: (messageId: string) => void): void {
  sqs.middlewareStack.add((next, context) => async (args) => {
    const result = await next(args);
    const input = args.input as { QueueUrl?: string };
    const output = result.output as { MessageId?: string; Successful?: { MessageId?: string }[] };
    if (input.QueueUrl === queueUrl) {
      if (context.commandName === 'SendMessageCommand' && output.MessageId) onSent(output.MessageId);
      if (context.commandName === 'SendMessageBatchCommand') for (const entry of output.Successful ?? []) if (entry.MessageId) onSent(entry.MessageId);
    }
    return result;
  }, { step: 'initialize', name: 'flowgateFlowBacklog' });
}

/** The messages of a settled batch that no longer wait: done, or failed for the last time (the queue then moves them to its dead-letter queue). */
export const settledIds = (deleted: readonly SQSRecord[], failed: readonly SQSRecord[], maxReceiveCount: number): string[] => [
  ...deleted.map((record) => record.messageId),
  ...failed.filter((record) => Number(record.attributes.ApproximateReceiveCount) >= maxReceiveCount).map((record) => record.messageId),
];
