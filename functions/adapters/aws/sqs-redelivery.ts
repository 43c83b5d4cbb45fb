import { ChangeMessageVisibilityCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Redelivery } from '../../domain/flows/ports.js';

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
