import type { EventQueue, Redelivery, RetryQueue } from '../../domain/flows/ports.js';
import type { SweepQueue } from '../../domain/kv/sweep-task.js';
import type { SearchMaintenance } from '../../domain/search/types.js';
import type { Clock } from '../../domain/clock.js';
import { portLoadedAhead, portOnFirstCall } from '../lazy.js';
import type { AwsClients } from './clients.js';

/*
 * SQS adapters for functions that send only on some requests, loaded with the SQS client by the
 * first call. See `sfn-on-first-use.ts` for the bundle's side.
 */

/** The sweep queue, for the kv function: of its requests only a purge sends to it. */
export const sqsSweepQueueOnFirstUse = (queueUrl: string, aws: AwsClients): SweepQueue =>
  portOnFirstCall(async () => (await import('./first-use/sqs.js')).sweepQueue(queueUrl, aws), { enqueue: true });

/** The search maintenance queue, for the search function: only its writes, purges and deletions send to it. */
export const sqsSearchMaintenanceOnFirstUse = (queueUrl: string, aws: AwsClients, options: { windowSeconds: number; now: Clock }): SearchMaintenance =>
  portOnFirstCall(async () => (await import('./first-use/sqs.js')).searchMaintenance(queueUrl, aws, options), { schedule: true });

/** Redelivery, for the flow worker, which changes a message's visibility only after a failed run. */
export const sqsRedeliveryOnFirstUse = (queueUrl: string, aws: AwsClients): Redelivery =>
  portOnFirstCall(async () => (await import('./first-use/sqs.js')).redelivery(queueUrl, aws), { delay: true });

/** The flow queue, for the flow worker, which sends to it only a failed direct attempt's retry. */
export const sqsRetryQueueOnFirstUse = (queueUrl: string, aws: AwsClients): RetryQueue =>
  portOnFirstCall(async () => (await import('./first-use/sqs.js')).retryQueue(queueUrl, aws), { requeue: true });

/** The flow queue, for the triggers function, which sends to it only to replay deliveries. */
export const sqsEventQueueOnFirstUse = (queueUrl: string, aws: AwsClients): EventQueue =>
  portOnFirstCall(async () => (await import('./first-use/sqs.js')).eventQueue(queueUrl, aws), { send: true });

/**
 * The flow queue, for the receiver, which sends to it on every acknowledged delivery: loaded from
 * the start of the first request (`loadAhead`), while it looks its trigger up, rather than at init.
 * The SQS client is a tenth of the receiver's import at init (bench/README.md, cold start).
 */
export const sqsEventQueueLoadedAhead = (queueUrl: string, aws: AwsClients): { port: EventQueue; loadAhead(): void } =>
  portLoadedAhead(async () => (await import('./first-use/sqs.js')).eventQueue(queueUrl, aws), { send: true });
