import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import { chunks } from '../functions/shared/chunks.js';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

export interface PollerOptions {
  sqs: SQSClient;
  queueUrl: string;
  queueArn: string;
  handler: SqsHandler;
  context: () => Context;
  batchSize: number;
  /**
   * Lambda's batching window (`MaximumBatchingWindowInSeconds`), in milliseconds: once a poll has
   * some messages, more are gathered until `batchSize` or the window's end. None (0): a batch is
   * what one poll answers, as Lambda invokes at once without a window.
   */
  batchingWindowMs?: number;
  /** Parallel poll loops, as Lambda runs several pollers per event source mapping. */
  concurrency: number;
  onError: (error: unknown) => void;
  /** After each batch: the records deleted as done, and those the handler reported failed (they stay on the queue). */
  onSettled?: (deleted: readonly SQSRecord[], failed: readonly SQSRecord[]) => void;
}

function toRecord(message: Message, queueArn: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId!,
    receiptHandle: message.ReceiptHandle!,
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: 'us-east-1',
  };
}

/**
 * Plays Lambda's SQS event source mapping with partial batch responses: receive a batch, invoke
 * the handler, delete what succeeded. Failed messages (or the whole batch when the handler throws)
 * stay and come back after the visibility timeout; the queue's redrive policy moves them to the
 * dead-letter queue after `maxReceiveCount` receives.
 */
/** Between the short polls of a batching window: a few dozen polls a second while a batch gathers, none otherwise. */
const GATHER_PAUSE_MS = 25;
/** SQS's most messages a ReceiveMessage answers (and a DeleteMessageBatch takes): a batch of more is several calls, as Lambda's pollers make it. */
const RECEIVE_MAX_MESSAGES = 10;
/** SQS's largest message, and Lambda's largest synchronous invocation payload, which an event source mapping's batch stays under. */
const SQS_MAX_MESSAGE_BYTES = 256 * 1024;
const LAMBDA_MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;

export class SqsPoller {
  private running = true;
  private readonly loops: Promise<void>[];
  /** Ends the long polls under way at stop, which otherwise hold it for up to their second's wait. */
  private readonly polls = new AbortController();

  constructor(private readonly options: PollerOptions) {
    this.loops = Array.from({ length: options.concurrency }, () => this.loop());
  }

  /**
   * Stops polling: a poll under way is cut short, a batch being handled finishes. A message the
   * queue handed to a cut poll is lost with the queue, which is in memory and stops with the
   * stack (local/recovery.ts queues every unfinished delivery again from its record on restart).
   */
  async stop(): Promise<void> {
    this.running = false;
    this.polls.abort();
    await Promise.all(this.loops);
  }

  private async loop(): Promise<void> {
    const { sqs, queueUrl } = this.options;
    while (this.running) {
      try {
        const received = await sqs.send(new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: Math.min(RECEIVE_MAX_MESSAGES, this.options.batchSize),
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['All'],
          // local-aws-sqs reads only the older name; AWS accepts both.
          AttributeNames: ['All'],
        }), { abortSignal: this.polls.signal });
        const messages = received.Messages ?? [];
        if (messages.length > 0) await this.deliver(await this.gather(messages));
      } catch (error) {
        if (!this.running) break;
        this.options.onError(error);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  /**
   * The batching window: short polls for what more arrives until the batch is full or the window
   * ends (short, so none is cut at the window's end with messages the queue already handed it).
   */
  private async gather(first: Message[]): Promise<Message[]> {
    const { batchingWindowMs = 0, batchSize } = this.options;
    const messages = [...first];
    let bytes = first.reduce((sum, m) => sum + Buffer.byteLength(m.Body ?? ''), 0);
    const ends = Date.now() + batchingWindowMs;
    // Lambda invokes once a batch would pass its 6 MB payload: the next message may be a whole 256 KiB.
    while (this.running && messages.length < batchSize && bytes + SQS_MAX_MESSAGE_BYTES <= LAMBDA_MAX_PAYLOAD_BYTES && Date.now() < ends) {
      const more = await this.options.sqs.send(new ReceiveMessageCommand({
        QueueUrl: this.options.queueUrl,
        MaxNumberOfMessages: Math.min(RECEIVE_MAX_MESSAGES, batchSize - messages.length),
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ['All'],
        AttributeNames: ['All'],
      }));
      if (more.Messages?.length) {
        messages.push(...more.Messages);
        bytes += more.Messages.reduce((sum, m) => sum + Buffer.byteLength(m.Body ?? ''), 0);
      }
      else await new Promise((resolve) => setTimeout(resolve, Math.min(GATHER_PAUSE_MS, Math.max(0, ends - Date.now()))));
    }
    return messages;
  }

  private async deliver(messages: Message[]): Promise<void> {
    const records = messages.map((m) => toRecord(m, this.options.queueArn));
    let failed: Set<string>;
    try {
      const response = await this.options.handler({ Records: records }, this.options.context());
      failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (error) {
      this.options.onError(error);
      return;
    }
    const done = records.filter((r) => !failed.has(r.messageId));
    // DeleteMessageBatch takes 10 entries a call, as ReceiveMessage answers 10: a batch of more is several.
    await Promise.all(chunks(done, RECEIVE_MAX_MESSAGES).map((chunk) => this.options.sqs.send(new DeleteMessageBatchCommand({
      QueueUrl: this.options.queueUrl,
      Entries: chunk.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
    }))));
    this.options.onSettled?.(done, records.filter((r) => failed.has(r.messageId)));
  }
}
