import type { SQSClient } from '@aws-sdk/client-sqs';

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
export class FlowBacklog {
  /** Message id → when it was queued (epoch ms); insertion order is sending order. */
  private readonly queued = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Notes every message the client sends to `queueUrl`; call before anything sends. */
  watch(sqs: SQSClient, queueUrl: string): void {
    sqs.middlewareStack.add((next, context) => async (args) => {
      const result = await next(args);
      const input = args.input as { QueueUrl?: string };
      const output = result.output as { MessageId?: string; Successful?: { MessageId?: string }[] };
      if (input.QueueUrl === queueUrl) {
        if (context.commandName === 'SendMessageCommand' && output.MessageId) this.sent(output.MessageId);
        if (context.commandName === 'SendMessageBatchCommand') for (const entry of output.Successful ?? []) if (entry.MessageId) this.sent(entry.MessageId);
      }
      return result;
    }, { step: 'initialize', name: 'flowgateFlowBacklog' });
  }

  sent(messageId: string): void {
    if (!this.queued.has(messageId)) this.queued.set(messageId, this.now());
  }

  done(messageId: string): void {
    this.queued.delete(messageId);
  }

  read(): FlowBacklogReading {
    const oldest = this.queued.values().next();
    return {
      waiting: this.queued.size,
      oldest_age_seconds: oldest.done ? null : Math.max(0, Math.floor((this.now() - oldest.value) / 1000)),
    };
  }
}
