import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { DynamoKvStore } from '../adapters/aws/dynamo-kv-store.js';
import { onFirstUse, portLoadedAhead, portOnFirstCall } from '../adapters/lazy.js';
import { decodeSweepTask, type SweepQueue, type SweepTask } from '../domain/kv/sweep-task.js';
import { Sweeper, type GenerationStore } from '../domain/kv/sweeper.js';
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
  return async (event, context) => {
    // One per invocation, as the flow worker's: a processor keeps its batch on itself.
    const processor = new BatchProcessor(EventType.SQS);
    const response = await processPartialResponse(event, async (record: SQSRecord) => {
      const task = decodeSweepTask(record.body);
      const outcome = await sweeper.run(task, { remainingMs: () => context.getRemainingTimeInMillis() });
      await logInfo(task.objectStoreId ? 'objects sweep' : task.kind ? 'streams sweep' : 'kv sweep', { bucket: task.name, generation: task.generation, kind: task.kind, ...outcome });
      if (outcome.deleted > 0) metricsRecorder.count(METRIC.kvItemsReclaimed, outcome.deleted);
    }, processor, { context, throwOnFullBatchFailure: false });
    await publishMetrics();
    return response;
  };
}

/**
 * The sweeper of every kind of store: a task that names an object store goes to the objects
 * bucket's, whose S3 client and catalog load with the first such task (they would take the
 * bundle past 300 KB at init); a stream's (`kind`) to the streams store, loaded with the first of
 * them for the same reason.
 */
export function composeKvSweeper(settings: Settings, aws: AwsClients) {
  // SQS only passes a sweep on (its next page, its final pass): the client starts loading as a task
  // begins, while the first page is read, and is off init, where the bundle stays under 300 KB.
  const { port: queue, loadAhead: loadQueueAhead } = portLoadedAhead<SweepQueue>(async () => {
    const [{ sqsClient }, { SqsSweepQueue }] = await Promise.all([import('../adapters/aws/clients/sqs.js'), import('../adapters/aws/sqs-sweep-queue.js')]);
    return new SqsSweepQueue(sqsClient(aws), settings.kvSweepQueueUrl);
  }, { enqueue: true });
  const streams = portOnFirstCall<GenerationStore>(
    async () => new (await import('../adapters/aws/dynamo-stream-store.js')).DynamoStreamStore(dynamoClient(aws), settings.kvTable),
    { isCurrent: true, scanGeneration: true, deleteFromGeneration: true },
  );
  const kv = new Sweeper({
    store: new DynamoKvStore(dynamoClient(aws), settings.kvTable),
    // Streams' old generations (purged messages, deleted streams' messages and consumers) are swept alike.
    others: { stream_messages: streams, stream_consumers: streams },
    queue,
    now: Date.now,
  });
  // With an object store's generations, its expiry passes (`kind: object_expiry`, its current generation).
  const objects = onFirstUse(async () => {
    const { objectGenerationSweep, objectExpiry } = await import('../adapters/aws/first-use/object-sweep.js');
    return {
      sweeper: new Sweeper({ store: objectGenerationSweep(settings.kvTable, settings.objectsBucket, aws), queue, now: Date.now }),
      expiry: objectExpiry(settings.kvTable, settings.objectsBucket, aws, queue, settings.objectExpirySweepSeconds),
    };
  });
  const sweeperOf = async (task: SweepTask) => (task.objectStoreId ? (await objects())[task.kind === 'object_expiry' ? 'expiry' : 'sweeper'] : kv);
  return createSweepHandler({
    run: async (task, run) => {
      loadQueueAhead();
      return (await sweeperOf(task)).run(task, run);
    },
  });
}
