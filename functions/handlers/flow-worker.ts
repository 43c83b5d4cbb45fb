import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { DynamoExecutionStore } from '../adapters/aws/dynamo-execution-store.js';
import { dynamoDocumentClient } from '../adapters/aws/dynamo-client.js';
import { sfnClient } from '../adapters/aws/sfn-client.js';
import { SfnFlowRunner } from '../adapters/aws/sfn-flow-runner.js';
import { runQueuedFlow } from '../domain/flows/run-queued-flow.js';
import { QUEUES } from '../manifest.js';
import { requireEnv, tableName } from '../shared/env.js';
import { logger } from '../shared/logger.js';

/** Express workflows run five minutes at most; leave the function time to record the outcome. */
const MAX_FLOW_MS = 5 * 60_000;
const RECORDING_MARGIN_MS = 5_000;

const deps = {
  executions: new DynamoExecutionStore(dynamoDocumentClient, tableName('executions')),
  flows: new SfnFlowRunner(sfnClient, requireEnv('FLOW_STATE_MACHINE_ARN_PREFIX')),
  maxReceiveCount: QUEUES.flowEvents.maxReceiveCount,
};
const processor = new BatchProcessor(EventType.SQS);

/** Consumes the flow queue; failed records are reported one by one so the others are not redelivered. */
export const handler = async (event: SQSEvent, context: Context) =>
  processPartialResponse(event, async (record: SQSRecord) => {
    const timeoutMs = Math.min(MAX_FLOW_MS, context.getRemainingTimeInMillis() - RECORDING_MARGIN_MS);
    try {
      await runQueuedFlow(deps, record.body, Number(record.attributes.ApproximateReceiveCount), timeoutMs);
    } catch (error) {
      logger.warn('flow attempt failed', { messageId: record.messageId, error: (error as Error).message });
      throw error;
    }
  }, processor, { context, processInParallel: true, throwOnFullBatchFailure: false });
