import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { EventQueue } from '../../domain/flows/ports.js';
import { AppError } from '../../shared/errors.js';
import { Coalescer } from './coalescer.js';

/** `SendMessageBatch`'s most entries per call. */
const MAX_MESSAGES_PER_CALL = 10;
/**
 * Bytes of message bodies per call: SQS's batch limit was 256 KiB before it became 1 MiB (2025);
 * the older figure holds wherever the queue's own limit does, and a flow message is at most 256 KB.
 */
const MAX_BYTES_PER_CALL = 256 * 1024;

/**
 * The flow queue. Messages sent while others are on their way go together in one
 * `SendMessageBatch` (`./coalescer.ts`; the IAM action is still `sqs:SendMessage`), each sender
 * answered once SQS holds its own. Any failure to enqueue is `unavailable`: the sender must retry.
 */
export class SqsEventQueue implements EventQueue {
  private readonly coalescer: Coalescer<string>;

  constructor(private readonly sqs: SQSClient, private readonly queueUrl: string) {
    this.coalescer = new Coalescer<string>({
      maxItems: MAX_MESSAGES_PER_CALL, maxWeight: MAX_BYTES_PER_CALL, weigh: (body) => Buffer.byteLength(body), send: (bodies) => this.sendBatch(bodies),
    });
  }

  async send(body: string): Promise<void> {
    try {
      await this.coalescer.add([body]);
    } catch (error) {
      throw new AppError('unavailable', `queue refused the event: ${(error as Error).name}`);
    }
  }

  private async sendBatch(bodies: string[]): Promise<(Error | undefined)[]> {
    const { Failed = [] } = await this.sqs.send(new SendMessageBatchCommand({
      QueueUrl: this.queueUrl, Entries: bodies.map((MessageBody, i) => ({ Id: String(i), MessageBody })),
    }));
    const failed = new Map(Failed.map((entry) => [entry.Id, entry]));
    return bodies.map((_, i) => {
      const refusal = failed.get(String(i));
      if (!refusal) return undefined;
      const error = new Error(refusal.Message ?? 'refused');
      error.name = refusal.Code ?? 'SendMessageBatchEntryFailed';
      return error;
    });
  }
}
