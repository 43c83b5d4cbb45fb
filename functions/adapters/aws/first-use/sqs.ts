/** Loaded by the `sqs…OnFirstUse` adapters: the SQS client and what uses it, one chunk of the bundle. */
import type { Redelivery } from '../../../domain/flows/ports.js';
import type { SweepQueue } from '../../../domain/kv/sweep-task.js';
import { sqsClient } from '../sqs-client.js';
import { SqsRedelivery } from '../sqs-redelivery.js';
import { SqsSweepQueue } from '../sqs-sweep-queue.js';

export const sweepQueue = (queueUrl: string): SweepQueue => new SqsSweepQueue(sqsClient, queueUrl);
export const redelivery = (queueUrl: string): Redelivery => new SqsRedelivery(sqsClient, queueUrl);
