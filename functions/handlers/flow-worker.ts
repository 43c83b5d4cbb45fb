import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { DynamoDeliveryStats } from '../adapters/aws/dynamo-delivery-stats.js';
import { DynamoExecutionStore } from '../adapters/aws/dynamo-execution-store.js';
import { CountingExecutionStore } from '../adapters/counting-execution-store.js';
import { SfnFlowRunner } from '../adapters/aws/sfn-flow-runner.js';
import { MeteredFlowRunner } from '../adapters/metered-flow-runner.js';
import { sfnClient } from '../adapters/aws/clients/sfn.js';
import { sqsRedeliveryOnFirstUse } from '../adapters/aws/sqs-on-first-use.js';
import { EXPRESS_MAX_DURATION_MS } from '../domain/flows/limits.js';
import { batchedRunners } from '../domain/flows/batch-runs.js';
import type { BatchFlowRunner, FlowRunner } from '../domain/flows/ports.js';
import { runQueuedFlow, type WorkerDeps } from '../domain/flows/run-queued-flow.js';
import type { DeliveryStatsStore } from '../domain/stats/ports.js';
import { StatsTally } from '../domain/stats/tally.js';
import { QUEUES } from '../manifest.js';
import type { Settings } from '../settings.js';
import { logWarn } from '../shared/logger.js';
import { metricsRecorder, publishMetrics } from '../shared/metrics.js';

/** Leave the function time to record the outcome after the longest flow. */
const RECORDING_MARGIN_MS = 5_000;

/**
 * Runs a batch's events of one flow in one execution of its batch state machine (`batch-runs.ts`):
 * `single` runs an event alone, `meter` counts each event's run as `flows` does.
 */
export interface WorkerBatching {
  single: FlowRunner;
  batches: BatchFlowRunner;
  meter: (runner: FlowRunner) => FlowRunner;
}

/**
 * The flow queue's consumer over the given dependencies; failed records are reported one by one.
 * The batch's outcomes are counted together: one write per trigger and minute (`StatsTally`).
 */
export function createFlowWorkerHandler(deps: WorkerDeps & { batching?: WorkerBatching; stats: DeliveryStatsStore }) {
  const processor = new BatchProcessor(EventType.SQS);
  return async (event: SQSEvent, context: Context) => {
    const timeoutMs = Math.min(EXPRESS_MAX_DURATION_MS, context.getRemainingTimeInMillis() - RECORDING_MARGIN_MS);
    const batched = deps.batching
      ? batchedRunners(event.Records.map((record) => ({ id: record.messageId, body: record.body, receiveCount: Number(record.attributes.ApproximateReceiveCount) })), deps.batching.single, deps.batching.batches, timeoutMs)
      : new Map<string, FlowRunner>();
    const tally = new StatsTally();
    const counted = { ...deps, executions: new CountingExecutionStore(deps.executions, tally) };
    const response = await processPartialResponse(event, async (record: SQSRecord) => {
      const runner = batched.get(record.messageId);
      try {
        await runQueuedFlow(runner ? { ...counted, flows: deps.batching!.meter(runner) } : counted, { body: record.body, receiptHandle: record.receiptHandle, receiveCount: Number(record.attributes.ApproximateReceiveCount), timeoutMs });
      } catch (error) {
        await logWarn('flow attempt failed', { messageId: record.messageId, error: (error as Error).message });
        throw error;
      }
    }, processor, { context, processInParallel: true, throwOnFullBatchFailure: false });
    await tally.flush(deps.stats, deps.now);
    await publishMetrics();
    return response;
  };
}

export function composeFlowWorker(settings: Settings, aws: AwsClients) {
  const runner = new SfnFlowRunner(sfnClient(aws), settings.flowArnPrefix,
    settings.flowBatchArnPrefix === undefined ? undefined : { arnPrefix: settings.flowBatchArnPrefix, flows: settings.flowBatchNames });
  const meter = (inner: FlowRunner) => new MeteredFlowRunner(inner, metricsRecorder);
  return createFlowWorkerHandler({
    executions: new DynamoExecutionStore(dynamoClient(aws), settings.executionsTable, Date.now),
    stats: new DynamoDeliveryStats(dynamoClient(aws), settings.executionsTable, Date.now),
    flows: meter(runner),
    batching: { single: runner, batches: runner, meter },
    // Only a failed run changes a message's visibility: the SQS client loads on the first.
    redelivery: sqsRedeliveryOnFirstUse(settings.flowQueueUrl, aws),
    maxReceiveCount: QUEUES.flowEvents.maxReceiveCount,
    retryBaseSeconds: settings.flowRetryBaseSeconds,
    now: Date.now,
  });
}
