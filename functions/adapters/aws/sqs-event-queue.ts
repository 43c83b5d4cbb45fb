import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { EventQueue } from '../../domain/flows/ports.js';
import { AppError } from '../../shared/errors.js';

/** The flow queue. Any failure to enqueue is `unavailable`: the sender must retry. */
export class SqsEventQueue implements EventQueue {
  constructor(private readonly sqs: SQSClient, private readonly queueUrl: string) {}

  async send(body: string): Promise<void> {
    try {
      await this.sqs.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: body }));
    } catch (error) {
      throw new AppError('unavailable', `queue refused the event: ${(error as Error).name}`);
    }
  }
}
