/** Loaded by the `sqs…OnFirstUse` adapters: the SQS client and what uses it, one chunk of the bundle. */
import type { EventQueue, Redelivery, RetryQueue } from '../../../domain/flows/ports.js';
import type { SweepQueue } from '../../../domain/kv/sweep-task.js';
import type { SearchMaintenance } from '../../../domain/search/types.js';
import type { Clock } from '../../../domain/clock.js';
import type { AwsClients } from '../clients.js';
import { sqsClient } from '../clients/sqs.js';
import { SqsEventQueue } from '../sqs-event-queue.js';
import { SqsRedelivery, SqsRetryQueue } from '../sqs-redelivery.js';
import { SqsSearchMaintenance } from '../sqs-search-maintenance.js';
import { SqsSweepQueue } from '../sqs-sweep-queue.js';

export const sweepQueue = (queueUrl: string, aws: AwsClients): SweepQueue => new SqsSweepQueue(sqsClient(aws), queueUrl);
export const redelivery = (queueUrl: string, aws: AwsClients): Redelivery => new SqsRedelivery(sqsClient(aws), queueUrl);
export const retryQueue = (queueUrl: string, aws: AwsClients): RetryQueue => new SqsRetryQueue(sqsClient(aws), queueUrl);
export const eventQueue = (queueUrl: string, aws: AwsClients): EventQueue => new SqsEventQueue(sqsClient(aws), queueUrl);
export const searchMaintenance = (queueUrl: string, aws: AwsClients, options: { windowSeconds: number; now: Clock }): SearchMaintenance =>
  new SqsSearchMaintenance(sqsClient(aws), queueUrl, options);
