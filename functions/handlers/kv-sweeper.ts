import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { dynamoDocumentClient } from '../adapters/aws/dynamo-client.js';
import { DynamoKvStore } from '../adapters/aws/dynamo-kv-store.js';
import { sqsClient } from '../adapters/aws/sqs-client.js';
import { SqsSweepQueue } from '../adapters/aws/sqs-sweep-queue.js';
import { decodeSweepTask } from '../domain/kv/sweep-task.js';
import { Sweeper } from '../domain/kv/sweeper.js';
import { readSettings } from '../settings.js';
import { logger } from '../shared/logger.js';

type SqsBatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * The `kvSweep` consumer over one `Sweeper`; exported so tests can give it other settings. A record
 * that fails is reported in `batchItemFailures`, comes back after the visibility timeout from its
 * own position (deletes are idempotent), and reaches the dead-letter queue after `maxReceiveCount`.
 */
export function createSweepHandler(sweeper: Sweeper): SqsBatchHandler {
  const processor = new BatchProcessor(EventType.SQS);
  return (event, context) =>
    processPartialResponse(event, async (record: SQSRecord) => {
      const task = decodeSweepTask(record.body);
      const outcome = await sweeper.run(task, { remainingMs: () => context.getRemainingTimeInMillis() });
      logger.info('kv sweep', { bucket: task.name, generation: task.generation, ...outcome });
    }, processor, { context, throwOnFullBatchFailure: false });
}

const settings = readSettings('kvSweeper', process.env);
const store = new DynamoKvStore(dynamoDocumentClient, settings.kvTable);
export const handler = createSweepHandler(new Sweeper({ store, queue: new SqsSweepQueue(sqsClient, settings.kvSweepQueueUrl), now: Date.now }));
