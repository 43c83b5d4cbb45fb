import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { encodeSweepTask, type SweepQueue, type SweepTask } from '../../domain/kv/sweep-task.js';
import { AppError } from '../../shared/errors.js';

/** The `kvSweep` queue. A message that SQS did not accept is `unavailable` (503): the caller has changed nothing yet. */
export class SqsSweepQueue implements SweepQueue {
  constructor(private readonly client: SQSClient, private readonly queueUrl: string) {}

  async enqueue(task: SweepTask, delaySeconds: number): Promise<void> {
    try {
      await this.client.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: encodeSweepTask(task), DelaySeconds: delaySeconds }));
    } catch (error) {
      throw new AppError('unavailable', `sweep not enqueued: ${error instanceof Error ? error.name : 'unknown error'}`);
    }
  }
}
