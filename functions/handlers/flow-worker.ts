import type { AwsClients } from '../adapters/aws/clients.js';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { DynamoExecutionStore } from '../adapters/aws/dynamo-execution-store.js';
import { SfnFlowRunner } from '../adapters/aws/sfn-flow-runner.js';
import { SqsRedelivery } from '../adapters/aws/sqs-redelivery.js';
import { EXPRESS_MAX_DURATION_MS } from '../domain/flows/limits.js';
import { runQueuedFlow, type WorkerDeps } from '../domain/flows/run-queued-flow.js';
import { QUEUES } from '../manifest.js';
import type { Settings } from '../settings.js';
import { logger } from '../shared/logger.js';

/** Leave the function time to record the outcome after the longest flow. */
const RECORDING_MARGIN_MS = 5_000;

/** The flow queue's consumer over the given dependencies; failed records are reported one by one. */
export function createFlowWorkerHandler(deps: WorkerDeps) {
  const processor = new BatchProcessor(EventType.SQS);
  return async (event: SQSEvent, context: Context) =>
    processPartialResponse(event, async (record: SQSRecord) => {
      const timeoutMs = Math.min(EXPRESS_MAX_DURATION_MS, context.getRemainingTimeInMillis() - RECORDING_MARGIN_MS);
      try {
        await runQueuedFlow(deps, { body: record.body, receiptHandle: record.receiptHandle, receiveCount: Number(record.attributes.ApproximateReceiveCount), timeoutMs });
      } catch (error) {
        logger.warn('flow attempt failed', { messageId: record.messageId, error: (error as Error).message });
        throw error;
      }
    }, processor, { context, processInParallel: true, throwOnFullBatchFailure: false });
}

export const composeFlowWorker = (settings: Settings, aws: AwsClients) => createFlowWorkerHandler({
  executions: new DynamoExecutionStore(aws.dynamo, settings.executionsTable),
  flows: new SfnFlowRunner(aws.sfn, settings.flowArnPrefix),
  redelivery: new SqsRedelivery(aws.sqs, settings.flowQueueUrl),
  maxReceiveCount: QUEUES.flowEvents.maxReceiveCount,
  retryBaseSeconds: settings.flowRetryBaseSeconds,
  now: () => new Date(),
});
