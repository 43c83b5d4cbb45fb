import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { DynamoDeliveryStats } from '../adapters/aws/dynamo-delivery-stats.js';
import { DynamoExecutionStore } from '../adapters/aws/dynamo-execution-store.js';
import { CountingExecutionStore } from '../adapters/counting-execution-store.js';
import { SfnFlowRunner } from '../adapters/aws/sfn-flow-runner.js';
import { MeteredFlowRunner } from '../adapters/metered-flow-runner.js';
import { sfnClient } from '../adapters/aws/clients/sfn.js';
import { sqsRedeliveryOnFirstUse, sqsRetryQueueOnFirstUse } from '../adapters/aws/sqs-on-first-use.js';
import { EXPRESS_MAX_DURATION_MS } from '../domain/flows/limits.js';
import { batchedRunners } from '../domain/flows/batch-runs.js';
import type { BatchFlowRunner, FlowRunner } from '../domain/flows/ports.js';
import { FlowAttemptFailed, runQueuedFlow, type WorkerDeps } from '../domain/flows/run-queued-flow.js';
import { retryOfDestinationRecord } from '../domain/flows/direct-retry.js';
import { parseFlowMessage } from '../domain/flows/message.js';
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

/** The worker's two ways in: a batch of the flow queue, or one flow message invoked directly. */
export interface FlowWorkerFunction {
  (event: SQSEvent, context: Context): Promise<SQSBatchResponse>;
  /** A direct invocation's answer is an empty batch response: Lambda drops an asynchronous invocation's result. */
  (message: unknown, context: Context): Promise<SQSBatchResponse>;
}

const isSqsEvent = (event: unknown): event is SQSEvent => Array.isArray((event as SQSEvent | undefined)?.Records);

/** A record of the flow queue as the worker runs it: Lambda's destination record of a failed direct invocation becomes the retry it stands for. */
const asRetry = (record: SQSRecord): SQSRecord => {
  const retry = retryOfDestinationRecord(record.body);
  return retry === undefined ? record : { ...record, body: retry };
};

/**
 * The flow queue's consumer over the given dependencies; failed records are reported one by one.
 * The batch's outcomes are counted together: one write per trigger and minute (`StatsTally`).
 *
 * It is also invoked directly (asynchronously, by the receiver for a quiet trigger,
 * `direct-first-queue.ts`) with one flow message as the event: that message runs as the first
 * attempt of a queued one would; a failed run is retried through the flow queue and the invocation
 * succeeds; anything else that fails throws, and Lambda (no retries of its own) sends its record to
 * the flow queue, where this consumer runs it as the retry. A payload that is not a flow message is
 * logged and dropped: retrying it could not make it one.
 */
export function createFlowWorkerHandler(deps: WorkerDeps & { batching?: WorkerBatching; stats: DeliveryStatsStore }): FlowWorkerFunction {
  const direct = async (payload: unknown, context: Context) => {
    const timeoutMs = Math.min(EXPRESS_MAX_DURATION_MS, context.getRemainingTimeInMillis() - RECORDING_MARGIN_MS);
    const body = JSON.stringify(payload ?? null);
    // Checked here, before anything runs: an error thrown later (a payload that will not load, a
    // reply that will not parse) must reach Lambda's destination and be retried, never dropped.
    try {
      parseFlowMessage(body);
    } catch (error) {
      await logWarn('direct invocation is not a flow message: dropped', { error: (error as Error).message });
      return { batchItemFailures: [] };
    }
    const tally = new StatsTally();
    try {
      const deadLettered = await runQueuedFlow({ ...deps, executions: new CountingExecutionStore(deps.executions, tally) }, { body, receiveCount: 1, timeoutMs });
      if (deadLettered) await logWarn('flow attempt failed: dead-lettered', { direct: true, error: deadLettered.message });
    } catch (error) {
      if (error instanceof FlowAttemptFailed && error.handedBack) {
        await logWarn('flow attempt failed', { direct: true, error: error.message });
      } else {
        await tally.flush(deps.stats, deps.now).catch(() => undefined);
        await publishMetrics();
        throw error;
      }
    }
    await tally.flush(deps.stats, deps.now);
    await publishMetrics();
    return { batchItemFailures: [] };
  };
  return async (input: unknown, context: Context): Promise<SQSBatchResponse> => {
    if (!isSqsEvent(input)) return direct(input, context);
    const event: SQSEvent = { Records: input.Records.map(asRetry) };
    const timeoutMs = Math.min(EXPRESS_MAX_DURATION_MS, context.getRemainingTimeInMillis() - RECORDING_MARGIN_MS);
    const batched = deps.batching
      ? batchedRunners(event.Records.map((record) => ({ id: record.messageId, body: record.body, receiveCount: Number(record.attributes.ApproximateReceiveCount) })), deps.batching.single, deps.batching.batches, timeoutMs)
      : new Map<string, FlowRunner>();
    const tally = new StatsTally();
    const counted = { ...deps, executions: new CountingExecutionStore(deps.executions, tally) };
    // One per invocation: a processor keeps its batch's records and failures on itself, and the
    // local stack's poll loops invoke this handler several at once (Lambda runs one invocation at
    // a time in an environment). Shared, a batch begun meanwhile wiped the failures found so far,
    // and a failed record reported as done was deleted from the queue: neither retried nor
    // dead-lettered, its record left `queued`.
    const processor = new BatchProcessor(EventType.SQS);
    const response = await processPartialResponse(event, async (record: SQSRecord) => {
      const runner = batched.get(record.messageId);
      try {
        const deadLettered = await runQueuedFlow(runner ? { ...counted, flows: deps.batching!.meter(runner) } : counted, { body: record.body, receiptHandle: record.receiptHandle, receiveCount: Number(record.attributes.ApproximateReceiveCount), timeoutMs });
        // Done with as far as the queue goes (the event source deletes it), but its last attempt failed.
        if (deadLettered) await logWarn('flow attempt failed: dead-lettered', { messageId: record.messageId, error: deadLettered.message });
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
    retries: sqsRetryQueueOnFirstUse(settings.flowQueueUrl, aws),
    // Sent to only after an event's last failed attempt: the same adapter, loaded on that first use.
    deadLetters: sqsRetryQueueOnFirstUse(settings.flowDeadLetterQueueUrl, aws),
    maxReceiveCount: QUEUES.flowEvents.maxReceiveCount,
    retryBaseSeconds: settings.flowRetryBaseSeconds,
    now: Date.now,
  });
}
