import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { DynamoKvStore } from '../adapters/aws/dynamo-kv-store.js';
import { DynamoObjectCatalog } from '../adapters/aws/dynamo-object-catalog.js';
import { ObjectGenerationSweep } from '../adapters/aws/object-generation-sweep.js';
import { s3BlobStoreOnFirstUse } from '../adapters/aws/s3-on-first-use.js';
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
export function createSweepHandler(sweeper: Pick<Sweeper, 'run'>): SqsBatchHandler {
  const processor = new BatchProcessor(EventType.SQS);
  return async (event, context) => {
    const response = await processPartialResponse(event, async (record: SQSRecord) => {
      const task = decodeSweepTask(record.body);
      const outcome = await sweeper.run(task, { remainingMs: () => context.getRemainingTimeInMillis() });
      await logInfo(task.objectStoreId ? 'objects sweep' : 'kv sweep', { bucket: task.name, generation: task.generation, ...outcome });
      if (outcome.deleted > 0) metricsRecorder.count(METRIC.kvItemsReclaimed, outcome.deleted);
    }, processor, { context, throwOnFullBatchFailure: false });
    await publishMetrics();
    return response;
  };
}

/** The sweeper of every kind of store: a task that names an object store goes to the objects bucket's. */
export function composeKvSweeper(settings: Settings, aws: AwsClients) {
  const queue = new SqsSweepQueue(sqsClient(aws), settings.kvSweepQueueUrl);
  const kv = new Sweeper({ store: new DynamoKvStore(dynamoClient(aws), settings.kvTable), queue, now: Date.now });
  // The S3 client loads with the first object store's task.
  const objects = new Sweeper({ store: new ObjectGenerationSweep(new DynamoObjectCatalog(dynamoClient(aws), settings.kvTable), s3BlobStoreOnFirstUse(settings.objectsBucket, aws)), queue, now: Date.now });
  return createSweepHandler({ run: (task, run) => (task.objectStoreId ? objects : kv).run(task, run) });
}
