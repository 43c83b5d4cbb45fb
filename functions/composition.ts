import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { AwsClients } from './adapters/aws/clients.js';
import { composeAccounts } from './handlers/accounts.js';
import { composeApiKeys } from './handlers/api-keys.js';
import { composeFlowWorker } from './handlers/flow-worker.js';
import { composeKvSweeper } from './handlers/kv-sweeper.js';
import { composeKv } from './handlers/kv.js';
import { composeObjects } from './handlers/objects.js';
import { composeSearch } from './handlers/search.js';
import { composeSearchMaintenance } from './handlers/search-maintenance.js';
import { composeStreams } from './handlers/streams.js';
import { createSystemHandler, hostedUiFrom, type SystemDeps } from './handlers/system.js';
import { composeTriggers } from './handlers/triggers.js';
import { composeWebhook } from './handlers/webhook.js';
import type { FunctionName } from './manifest.js';
import type { Settings } from './settings.js';

export type HttpFunction = (event: APIGatewayProxyEventV2, context?: Context) => Promise<APIGatewayProxyStructuredResultV2>;
export type QueueFunction = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * How each function of the manifest is built from its settings and clients: the composition
 * root, for whoever hosts every function in one process (the local stack, benchmarks). Each
 * Lambda entry (`functions/entries/`) imports only its own composer, so a bundle holds one function.
 */
/** The system function hosted in one process: the console is built from its source into memory on first request. */
export const composeLocalSystem = (settings: Settings, backlog?: SystemDeps['backlog']) =>
  createSystemHandler({ consoleFiles: async () => (await import('../console/build.js')).buildConsole(), apiReferenceFiles: async () => (await import('../console/api-reference.js')).buildApiReference(), hostedUi: hostedUiFrom(settings), objectsOrigin: settings.objectsTransferOrigin, ...(backlog && { backlog }) });

export const COMPOSERS = {
  system: (settings) => composeLocalSystem(settings),
  apiKeys: composeApiKeys,
  kv: composeKv,
  kvSweeper: composeKvSweeper,
  objects: composeObjects,
  streams: composeStreams,
  search: composeSearch,
  searchMaintenance: composeSearchMaintenance,
  accounts: composeAccounts,
  triggers: composeTriggers,
  webhook: composeWebhook,
  flowWorker: composeFlowWorker,
} satisfies Record<FunctionName, (settings: Settings, aws: AwsClients) => HttpFunction | QueueFunction>;
