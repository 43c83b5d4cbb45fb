import { ChangeMessageVisibilityCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Redelivery, RetryQueue } from '../../domain/flows/ports.js';

/**
 * Sets when a received message comes back by changing its visibility timeout, counted from now
 * (at most 12 hours in SQS). A failed record then returns after the worker's backoff rather than
 * after the queue's visibility timeout.
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html
 */
export class SqsRedelivery implements Redelivery {
  constructor(private readonly sqs: SQSClient, private readonly queueUrl: string) {}

  async delay(receiptHandle: string, seconds: number): Promise<void> {
    await this.sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: this.queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: seconds }));
  }
}

/**
 * Puts a direct attempt's retry on the flow queue with `DelaySeconds` (at most 900 in SQS, the
 * longest backoff): it is then received, counted and dead-lettered as any queued message.
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html
 */
export class SqsRetryQueue implements RetryQueue {
  constructor(private readonly sqs: SQSClient, private readonly queueUrl: string) {}

  async requeue(body: string, seconds: number): Promise<void> {
    await this.sqs.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: body, DelaySeconds: Math.max(0, Math.min(900, Math.round(seconds))) }));
  }
}
