import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { AwsClients } from '../adapters/aws/clients.js';
import { decodeMaintenanceJob, runMaintenance } from '../domain/search/maintenance.js';
import type { SearchEngine } from '../domain/search/types.js';
import type { Settings } from '../settings.js';
import { logInfo } from '../shared/logger.js';
import { searchEngineFor } from '../adapters/lance/search-engine-on-first-use.js';

type SqsBatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * The `searchMaintenance` consumer: each record is one index's job (`domain/search/maintenance.ts`).
 * A job that fails is reported in `batchItemFailures`, comes back after the visibility timeout
 * (holding its index's group meanwhile: the queue is FIFO) and reaches the dead-letter queue after
 * `maxReceiveCount`; until a later write schedules another, that index's new rows stay searched flat.
 */
export function createSearchMaintenanceHandler(engine: Pick<SearchEngine, 'getIndex' | 'indexNow' | 'sweep'>): SqsBatchHandler {
  // A processor per invocation, as the flow worker's: one keeps its batch on itself.
  return async (event, context) => processPartialResponse(event, async (record: SQSRecord) => {
    const job = decodeMaintenanceJob(record.body);
    const started = Date.now();
    const outcome = await runMaintenance(engine, job);
    await logInfo('search maintenance', { index: job.name, generation: job.generation, ...outcome, ms: Date.now() - started });
  }, new BatchProcessor(EventType.SQS), { context, throwOnFullBatchFailure: false });
}

/** The search engine as the search function has it (one connection and its table handles, kept while the environment is warm). */
export const composeSearchMaintenance = (settings: Settings, _aws: AwsClients) => createSearchMaintenanceHandler(searchEngineFor(settings));
