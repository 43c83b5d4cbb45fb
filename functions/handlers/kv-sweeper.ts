import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { DynamoKvStore } from '../adapters/aws/dynamo-kv-store.js';
import { DynamoStreamStore } from '../adapters/aws/dynamo-stream-store.js';
import { sqsClient } from '../adapters/aws/clients/sqs.js';
import { SqsSweepQueue } from '../adapters/aws/sqs-sweep-queue.js';
import { decodeSweepTask } from '../domain/kv/sweep-task.js';
import { Sweeper } from '../domain/kv/sweeper.js';
import type { Settings } from '../settings.js';
import { logInfo } from '../shared/logger.js';
import { METRIC } from '../shared/metric-names.js';
import { metricsRecorder, publishMetrics } from '../shared/metrics.js';

type SqsBatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * The `kvSweep` consumer over one `Sweeper`; exported so tests can give it other settings. A record
 * that fails is reported in `batchItemFailures`, comes back after the visibility timeout from its
 * own position (deletes are idempotent), and reaches the dead-letter queue after `maxReceiveCount`.
 */
export function createSweepHandler(sweeper: Sweeper): SqsBatchHandler {
  const processor = new BatchProcessor(EventType.SQS);
  return async (event, context) => {
    const response = await processPartialResponse(event, async (record: SQSRecord) => {
      const task = decodeSweepTask(record.body);
      const outcome = await sweeper.run(task, { remainingMs: () => context.getRemainingTimeInMillis() });
      await logInfo('kv sweep', { bucket: task.name, generation: task.generation, kind: task.kind, ...outcome });
      if (outcome.deleted > 0) metricsRecorder.count(METRIC.kvItemsReclaimed, outcome.deleted);
    }, processor, { context, throwOnFullBatchFailure: false });
    await publishMetrics();
    return response;
  };
}

export function composeKvSweeper(settings: Settings, aws: AwsClients) {
  const streams = new DynamoStreamStore(dynamoClient(aws), settings.kvTable);
  return createSweepHandler(new Sweeper({
    store: new DynamoKvStore(dynamoClient(aws), settings.kvTable),
    // Streams' old generations (purged messages, deleted streams' messages and consumers) are swept alike.
    others: { stream_messages: streams, stream_consumers: streams },
    queue: new SqsSweepQueue(sqsClient(aws), settings.kvSweepQueueUrl),
    now: Date.now,
  }));
}
