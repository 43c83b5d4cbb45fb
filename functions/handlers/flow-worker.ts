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
 * The flow queue's consumer over the given dependencies; failed records are reported one by one.
 * The batch's outcomes are counted together: one write per trigger and minute (`StatsTally`).
 */
export function createFlowWorkerHandler(deps: WorkerDeps & { stats: DeliveryStatsStore }) {
  const processor = new BatchProcessor(EventType.SQS);
  return async (event: SQSEvent, context: Context) => {
    const tally = new StatsTally();
    const counted = { ...deps, executions: new CountingExecutionStore(deps.executions, tally) };
    const response = await processPartialResponse(event, async (record: SQSRecord) => {
      const timeoutMs = Math.min(EXPRESS_MAX_DURATION_MS, context.getRemainingTimeInMillis() - RECORDING_MARGIN_MS);
      try {
        await runQueuedFlow(counted, { body: record.body, receiptHandle: record.receiptHandle, receiveCount: Number(record.attributes.ApproximateReceiveCount), timeoutMs });
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

export const composeFlowWorker = (settings: Settings, aws: AwsClients) => createFlowWorkerHandler({
  executions: new DynamoExecutionStore(dynamoClient(aws), settings.executionsTable, Date.now),
  stats: new DynamoDeliveryStats(dynamoClient(aws), settings.executionsTable, Date.now),
  flows: new MeteredFlowRunner(new SfnFlowRunner(sfnClient(aws), settings.flowArnPrefix), metricsRecorder),
  // Only a failed run changes a message's visibility: the SQS client loads on the first.
  redelivery: sqsRedeliveryOnFirstUse(settings.flowQueueUrl, aws),
  maxReceiveCount: QUEUES.flowEvents.maxReceiveCount,
  retryBaseSeconds: settings.flowRetryBaseSeconds,
  now: Date.now,
});
