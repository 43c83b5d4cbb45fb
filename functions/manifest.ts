/**
 * The single description of the service that both the CDK stack (`lib/`) and the local stack
 * (`local/`) read: tables, queues, functions, what each function may touch, and the HTTP routes.
 * Nothing here imports AWS or CDK code, so handlers can import it too.
 */

import type { Scope } from './domain/api-keys.js';
import { EXPRESS_MAX_DURATION_MS } from './domain/flows/limits.js';
import { MAINTENANCE_WINDOW_SECONDS } from './domain/search/limits.js';
import { SECRET_PURPOSES, type SecretPurpose } from './domain/secret-purposes.js';

/** A global secondary index: string keys, every attribute projected. */
export interface IndexSpec {
  partitionKey: string;
  sortKey: string;
}

/**
 * DynamoDB tables. Every table has a string partition key `pk` and sort key `sk`, and the global
 * secondary indexes named in `indexes` (only items carrying both of an index's attributes are in it).
 */
export const TABLES = {
  // Idempotency records of the API-key routes (DynamoIdempotencyStore) expire by `expires_at`; nothing else here carries it.
  auth: { env: 'AUTH_TABLE', ttlAttribute: 'expires_at' },
  // DynamoKvStore's VALUE_EXPIRY_ATTRIBUTE: values with `ttl_seconds` are deleted once expired, not only hidden.
  // DynamoKvStore's BUCKETS_BY_ACCOUNT: only buckets' configuration items carry `bucket_owner`, so listing an account's buckets is a Query.
  kv: { env: 'KV_TABLE', ttlAttribute: 'expires_at', indexes: { byOwner: { partitionKey: 'bucket_owner', sortKey: 'name' } } },
  accounts: { env: 'ACCOUNTS_TABLE', ttlAttribute: 'expires_at' },
  triggers: { env: 'TRIGGERS_TABLE', ttlAttribute: 'expires_at' },
  executions: { env: 'EXECUTIONS_TABLE', ttlAttribute: 'expires_at' },
} as const;
export type TableName = keyof typeof TABLES;

/**
 * AWS recommends at least 5 receives before a Lambda consumer's message is dead-lettered: a
 * throttled invocation uses up a receive without running the function.
 * https://docs.aws.amazon.com/lambda/latest/dg/sqs-retries.html
 */
export const MIN_RECEIVES_FOR_LAMBDA_CONSUMER = 5;

/**
 * How long the queues and their dead-letter queues keep a message: SQS's maximum, 14 days. A
 * message waits out an outage of its consumer, and one in a DLQ is there because something is
 * wrong, which takes time to look at. (A standard queue's message keeps its first enqueue time in
 * the DLQ, so it stays there 14 days minus the time it spent being retried.)
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 */
export const MESSAGE_RETENTION_DAYS = 14;

/** Search maintenance's debounce window (`domain/search/limits.ts`): the queue's delay, and the window a job's deduplication id names. */
export const SEARCH_MAINTENANCE_WINDOW_SECONDS = MAINTENANCE_WINDOW_SECONDS;

/** SQS queues, each with a dead-letter queue after `maxReceiveCount` receives, consumed by one function. */
export const QUEUES = {
  kvSweep: { env: 'KV_SWEEP_QUEUE_URL', consumer: 'kvSweeper', maxReceiveCount: MIN_RECEIVES_FOR_LAMBDA_CONSUMER, batchSize: 1 },
  // A busy trigger's events (a quiet one's go to the worker directly, functions/domain/flows/quiet-rule.ts) wait up to a
  // second for company: without a window, Lambda invokes as soon as one is there, and at 8 a second each is a batch alone.
  // Up to 100 a batch (over 10 needs the window): a worker invocation, an express execution per 40 events of a flow
  // (functions/domain/flows/batch-runs.ts) and a counter write per trigger and minute are shared by a second's events;
  // the queue's receives and deletes take 10 messages a call whatever the batch.
  flowEvents: { env: 'FLOW_QUEUE_URL', consumer: 'flowWorker', maxReceiveCount: MIN_RECEIVES_FOR_LAMBDA_CONSUMER, batchSize: 100, batchingWindowSeconds: 1 },
  // FIFO, one group per index (its maintenance never races itself); each job waits out the queue's delay, the debounce window
  // its deduplication id names, so it runs after every write of its window (functions/adapters/aws/sqs-search-maintenance.ts).
  searchMaintenance: { env: 'SEARCH_MAINTENANCE_QUEUE_URL', consumer: 'searchMaintenance', maxReceiveCount: MIN_RECEIVES_FOR_LAMBDA_CONSUMER, batchSize: 1, fifo: true, delaySeconds: SEARCH_MAINTENANCE_WINDOW_SECONDS },
} as const;
export type QueueName = keyof typeof QUEUES;

/**
 * A DynamoDB operation a function's adapters send (`functions/adapters/aws/dynamo-*.ts`); each is
 * granted as exactly the IAM action `dynamodb:<operation>`. Conditional writes need nothing more.
 */
export type TableOperation = 'GetItem' | 'Query' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'BatchWriteItem' | 'BatchGetItem';
/** The operations a function sends to one table: no more, so no `Scan`, stream reads or unused writes. */
export type TableAccess = readonly TableOperation[];

/**
 * The S3 operations functions send to the objects bucket (`functions/adapters/aws/s3-*.ts`), by
 * the SDK's name, presigned ones included (a presigned URL acts with its signer's permissions),
 * each with the IAM action that allows it. `s3:ListBucket` is granted on the bucket, every other
 * action on its objects only.
 */
export const BUCKET_OPERATIONS = {
  PutObject: 's3:PutObject',
  GetObject: 's3:GetObject',
  HeadObject: 's3:GetObject',
  DeleteObject: 's3:DeleteObject',
  CreateMultipartUpload: 's3:PutObject',
  UploadPart: 's3:PutObject',
  CompleteMultipartUpload: 's3:PutObject',
  AbortMultipartUpload: 's3:AbortMultipartUpload',
  ListObjectsV2: 's3:ListBucket',
  DeleteObjects: 's3:DeleteObject',
} as const;
export type BucketOperation = keyof typeof BUCKET_OPERATIONS;

/** What a function does with the secrets key, and for which kinds of secret. */
export interface SecretsKeyUse {
  /** `encrypt` seals (kms:Encrypt), `decrypt` opens (kms:Decrypt); a function that does both lists both. */
  operations: readonly ('encrypt' | 'decrypt')[];
  /** The `purpose` of the SecretBox contexts it uses; the grant holds for no other. */
  purposes: readonly SecretPurpose[];
}

export interface FunctionSpec {
  /** Source file, relative to the repository root, exporting `handler`. */
  entry: string;
  timeoutSeconds: number;
  memoryMb: number;
  tables: Partial<Record<TableName, TableAccess>>;
  sendsTo: readonly QueueName[];
  /** Uses the key that seals secrets at rest. */
  secretsKey?: SecretsKeyUse;
  /** Starts flow executions synchronously. */
  runsFlows?: boolean;
  /**
   * Reads `FLOW_NAMES` (the trigger API validates flow names); only these functions get it (`functions/settings.ts`).
   * Their bundles also carry the flows' definitions (`GET /flows/{name}`), too large for the environment.
   */
  readsFlowNames?: boolean;
  /** Serves the console: its bundle carries the console's built files (`console/build.ts`). */
  servesConsole?: boolean;
  /** Signs step-up proofs (`mfa_token`) with the MFA signing key (kms:Sign, kms:GetPublicKey). */
  signsMfaTokens?: boolean;
  /** The S3 operations it sends to the objects bucket; only these functions load the S3 client. */
  objectsBucket?: readonly BucketOperation[];
  /** Indexes (of `TABLES`) it queries: granted `dynamodb:Query` on exactly those, nothing else on any index. */
  queriesIndexes?: Partial<Record<TableName, readonly string[]>>;
  /**
   * Packages with native code the bundle leaves out (esbuild cannot bundle a `.node` binary): they
   * come with the function in a layer staged from node_modules (its platform binary and runtime
   * dependencies included), at /opt/nodejs/node_modules.
   */
  nativeModules?: readonly string[];
  /** Lambda's instruction set; arm64 unless a native module's installed binary says otherwise. */
  architecture?: 'arm64' | 'x86_64';
}


/** The search engine and what it loads: in one layer, shared by the functions that run it. */
const SEARCH_NATIVE_MODULES = ['@lancedb/lancedb', 'apache-arrow'] as const;

/**
 * A function serving a `gateway` route reads the auth table to resolve `X-Api-Key`
 * (`DynamoApiKeyStore.findByHash`); one whose routes are all `bearer` never does.
 */
const API_KEY_LOOKUP = ['GetItem'] as const satisfies TableAccess;

/** The flow worker outlives the longest flow it runs (an express workflow's limit) by 30 s to record the outcome. */
const FLOW_WORKER_TIMEOUT_SECONDS = EXPRESS_MAX_DURATION_MS / 1000 + 30;

/**
 * The table operations below are what each function's use cases send through its adapters: e.g.
 * the trigger store writes with conditional puts and deletes (never an update), the sweeper
 * deletes in batches, and listings are queries of one partition. Change them with the adapters:
 * `test/handlers/table-operations.test.ts` fails when the two differ either way.
 */
export const FUNCTIONS = {
  system: { entry: 'functions/entries/system.ts', timeoutSeconds: 5, memoryMb: 256, tables: {}, sendsTo: [], servesConsole: true },
  apiKeys: { entry: 'functions/entries/api-keys.ts', timeoutSeconds: 10, memoryMb: 256, tables: { auth: ['GetItem', 'Query', 'PutItem', 'DeleteItem'] }, sendsTo: [] },
  kv: { entry: 'functions/entries/kv.ts', timeoutSeconds: 29, memoryMb: 512, tables: { auth: API_KEY_LOOKUP, kv: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'] }, sendsTo: ['kvSweep'], queriesIndexes: { kv: ['byOwner'] } },
  // Object stores keep their catalog in the kv table (own key prefixes) and their bytes in the objects bucket.
  objects: { entry: 'functions/entries/objects.ts', timeoutSeconds: 29, memoryMb: 1024, tables: { auth: API_KEY_LOOKUP, kv: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'] }, sendsTo: ['kvSweep'], objectsBucket: ['PutObject', 'GetObject', 'HeadObject', 'DeleteObject', 'CreateMultipartUpload', 'UploadPart', 'CompleteMultipartUpload', 'AbortMultipartUpload'] },
  // Streams keep everything in the kv table (own key prefixes): heads, messages, consumers, pending deliveries.
  streams: { entry: 'functions/entries/streams.ts', timeoutSeconds: 29, memoryMb: 512, tables: { auth: API_KEY_LOOKUP, kv: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'BatchGetItem'] }, sendsTo: ['kvSweep'] },
  // Search indexes live in LanceDB, embedded (functions/adapters/lance/): its native module is loaded on first use, never at init.
  // The engine ships in a layer staged from node_modules (lib/constructs/native-modules-layer.ts), so it runs on x86_64: the
  // lock installs the binary npm picks for the machine that runs `npm ci` (@lancedb/lancedb-linux-x64-gnu); arm64 would need
  // the arm64 optional package (@lancedb/lancedb-linux-arm64-gnu) installed for Lambda's platform instead.
  search: { entry: 'functions/entries/search.ts', timeoutSeconds: 29, memoryMb: 2048, tables: { auth: API_KEY_LOOKUP }, sendsTo: ['searchMaintenance'], nativeModules: SEARCH_NATIVE_MODULES, architecture: 'x86_64' },
  // The same engine, run by the searchMaintenance queue: full-text index builds and optimize, and the sweep of dropped generations.
  searchMaintenance: { entry: 'functions/entries/search-maintenance.ts', timeoutSeconds: 120, memoryMb: 2048, tables: {}, sendsTo: [], nativeModules: SEARCH_NATIVE_MODULES, architecture: 'x86_64' },
  // One sweeper for every kind of store: KV buckets' and streams' generations in the table, object stores' in the bucket and the table.
  // Object stores' expiry passes too: expired entries deleted by revision (DeleteItem), usage given back (UpdateItem), uploads aborted.
  kvSweeper: { entry: 'functions/entries/kv-sweeper.ts', timeoutSeconds: 300, memoryMb: 512, tables: { kv: ['GetItem', 'Query', 'BatchWriteItem', 'UpdateItem', 'DeleteItem'] }, sendsTo: ['kvSweep'], objectsBucket: ['ListObjectsV2', 'DeleteObjects', 'DeleteObject', 'AbortMultipartUpload'] },
  // Decrypt: a sign-in code is checked against the stored secret. The auth table: an admin key lists a user's factors;
  // an administrator mints admin keys here (PutItem: the key and its audit event), where step-up proofs are checked and spent.
  accounts: { entry: 'functions/entries/accounts.ts', timeoutSeconds: 10, memoryMb: 256, tables: { auth: ['GetItem', 'PutItem'], accounts: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'] }, sendsTo: [], secretsKey: { operations: ['encrypt', 'decrypt'], purposes: [SECRET_PURPOSES.totp] }, signsMfaTokens: true },
  // 29 s, as the receiver: a bulk replay of 500 deliveries took about 3 s on the local stack (single-threaded engines).
  // Decrypt: only to show a Notion trigger's verification token to its owner, once.
  triggers: { entry: 'functions/entries/triggers.ts', timeoutSeconds: 29, memoryMb: 256, tables: { auth: API_KEY_LOOKUP, triggers: ['GetItem', 'Query', 'PutItem', 'DeleteItem'], executions: ['Query', 'GetItem', 'BatchGetItem', 'PutItem', 'BatchWriteItem', 'DeleteItem'] }, sendsTo: ['flowEvents'], secretsKey: { operations: ['encrypt', 'decrypt'], purposes: [SECRET_PURPOSES.webhookSignature] }, readsFlowNames: true },
  // The receiver seals and stores the secret an Asana or Notion handshake hands over (PutItem, Encrypt).
  // 512 MB: it mostly waits (three AWS calls a delivery, and in wait mode the flow itself), and Lambda bills the wait
  // by memory; its own CPU is about 3.5 ms a delivery on a full core (bench receiver), about 12 ms at 512 MB's share.
  webhook: { entry: 'functions/entries/webhook.ts', timeoutSeconds: 29, memoryMb: 512, tables: { triggers: ['GetItem', 'PutItem'], executions: ['PutItem', 'BatchWriteItem', 'UpdateItem', 'DeleteItem'] }, sendsTo: ['flowEvents'], secretsKey: { operations: ['decrypt', 'encrypt'], purposes: [SECRET_PURPOSES.webhookSignature] }, runsFlows: true },
  // 256 MB: the worker waits on Step Functions and DynamoDB; its own work per event is a parse and two small writes.
  flowWorker: { entry: 'functions/entries/flow-worker.ts', timeoutSeconds: FLOW_WORKER_TIMEOUT_SECONDS, memoryMb: 256, tables: { executions: ['GetItem', 'BatchWriteItem', 'UpdateItem'] }, sendsTo: ['flowEvents'], runsFlows: true },
} as const satisfies Record<string, FunctionSpec>;
export type FunctionName = keyof typeof FUNCTIONS;

/**
 * `gateway`: bearer JWT or X-Api-Key; `bearer`: a user's JWT only; `api_key`: an account's
 * X-Api-Key only (an account credential, for acting on its users); `none`: the route checks for itself.
 */
export type RouteAuth = 'gateway' | 'bearer' | 'api_key' | 'none';
export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'ANY';

export interface RouteSpec {
  method: HttpMethod;
  /** API Gateway route path: `{name}` for one segment, `{name+}` greedy. */
  path: string;
  fn: FunctionName;
  auth: RouteAuth;
  operationId: string;
  /**
   * The path clients call, when API Gateway's route must be wider than it (a greedy parameter must end a route):
   * the OpenAPI document shows this one. @default path
   */
  documentedPath?: string;
  /** The handler action it runs when that is another route's: a key route's query form runs its path form's. @default operationId */
  action?: string;
  tag: string;
  /**
   * The scope a credential needs (`functions/domain/api-keys.ts`): every `gateway` and `api_key`
   * route names one; a `bearer` route may (`admin`: the user must be an administrator).
   */
  scope?: Scope;
  /**
   * Honours `Idempotency-Key` (functions/domain/idempotency.ts): a POST that creates something or
   * runs something again, which a client retries. The function keeps the records in its own table.
   */
  idempotent?: true;
}

export const TAGS = {
  system: 'System',
  apiKeys: 'API Keys',
  kv: 'KV Buckets',
  objects: 'Object Stores',
  streams: 'Streams',
  search: 'Search Indexes',
  mfa: 'Multi-Factor Authentication',
  triggers: 'Webhook Triggers',
} as const;

/** Reading routes need the `:read` scope; a presigned GET URL (`createObjectUrl`, and its `?key=` twin) only reads too. */
/** A search query is a POST (its body is the query) that only reads. */
const readsOnly = (method: HttpMethod, action: string) => method === 'GET' || method === 'HEAD' || action === 'createObjectUrl' || action === 'querySearchIndex';
const storageScope = (method: HttpMethod, action: string): Scope => (readsOnly(method, action) ? 'storage:read' : 'storage');
const triggersScope = (method: HttpMethod, action: string): Scope => (readsOnly(method, action) ? 'triggers:read' : 'triggers');

const kv = (method: HttpMethod, path: string, operationId: string, action?: string): RouteSpec =>
  ({ method, path: `/storage/kv/${path}`, fn: 'kv', auth: 'gateway', operationId, ...(action && { action }), tag: TAGS.kv, scope: storageScope(method, action ?? operationId) });
const objects = (method: HttpMethod, path: string, operationId: string, action?: string): RouteSpec =>
  ({ method, path: `/storage/objects/${path}`, fn: 'objects', auth: 'gateway', operationId, ...(action && { action }), tag: TAGS.objects, scope: storageScope(method, action ?? operationId) });
const streams = (method: HttpMethod, path: string, operationId: string): RouteSpec =>
  ({ method, path: `/storage/streams/${path}`, fn: 'streams', auth: 'gateway', operationId, tag: TAGS.streams, scope: storageScope(method, operationId) });
const search = (method: HttpMethod, path: string, operationId: string): RouteSpec =>
  ({ method, path: `/storage/search/${path}`, fn: 'search', auth: 'gateway', operationId, tag: TAGS.search, scope: storageScope(method, operationId) });
const trigger = (method: HttpMethod, path: string, operationId: string): RouteSpec =>
  ({ method, path, fn: 'triggers', auth: 'gateway', operationId, tag: TAGS.triggers, scope: triggersScope(method, operationId) });
const mfa = (path: string, operationId: string, method: HttpMethod = 'POST', auth: RouteAuth = 'bearer', scope?: Scope): RouteSpec =>
  ({ method, path: `/accounts/${path}`, fn: 'accounts', auth, operationId, tag: TAGS.mfa, ...(scope && { scope }) });

/** The route table. API Gateway's `routeKey` for each is `${method} ${path}`. */
export const ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: '/health', fn: 'system', auth: 'none', operationId: 'getHealth', tag: TAGS.system },
  { method: 'GET', path: '/openapi.json', fn: 'system', auth: 'none', operationId: 'getOpenApi', tag: TAGS.system },
  // The console's pages: it signs in in the browser and calls the routes below like any client.
  { method: 'GET', path: '/console', fn: 'system', auth: 'none', operationId: 'getConsole', tag: TAGS.system },
  { method: 'GET', path: '/console/{asset+}', fn: 'system', auth: 'none', operationId: 'getConsoleAsset', tag: TAGS.system },
  // The API reference page, rendered in the browser from /openapi.json; its script is vendored, served from here.
  { method: 'GET', path: '/docs', fn: 'system', auth: 'none', operationId: 'getApiReference', tag: TAGS.system },
  { method: 'GET', path: '/docs/{asset+}', fn: 'system', auth: 'none', operationId: 'getApiReferenceAsset', tag: TAGS.system },

  // Key management is for users (bearer tokens) only: a key can neither mint, list nor revoke keys.
  { method: 'POST', path: '/api-keys', fn: 'apiKeys', auth: 'bearer', operationId: 'createApiKey', idempotent: true, tag: TAGS.apiKeys },
  { method: 'GET', path: '/api-keys', fn: 'apiKeys', auth: 'bearer', operationId: 'listApiKeys', tag: TAGS.apiKeys },
  { method: 'DELETE', path: '/api-keys/{id}', fn: 'apiKeys', auth: 'bearer', operationId: 'revokeApiKey', tag: TAGS.apiKeys },
  { method: 'GET', path: '/api-keys/events', fn: 'apiKeys', auth: 'bearer', operationId: 'listApiKeyEvents', tag: TAGS.apiKeys },
  // In the accounts function, where step-up proofs are checked and spent.
  { method: 'POST', path: '/api-keys/admin', fn: 'accounts', auth: 'bearer', scope: 'admin', operationId: 'createAdminApiKey', tag: TAGS.apiKeys },

  { method: 'GET', path: '/storage/kv', fn: 'kv', auth: 'gateway', scope: 'storage:read', operationId: 'listKVBuckets', tag: TAGS.kv },
  kv('PUT', '{bucket}', 'createKVBucket'),
  kv('GET', '{bucket}', 'getKVBucket'),
  kv('DELETE', '{bucket}', 'deleteKVBucket'),
  kv('DELETE', '{bucket}/purge', 'purgeKVBucket'),
  kv('GET', '{bucket}/keys', 'listKVKeys'),
  // A key goes in `?key=`, which survives the single encoding every client applies; API Gateway cuts a
  // key in the path at an encoded `?`, so `…/keys/{key+}` (encoded twice) is kept for existing callers.
  kv('PUT', '{bucket}/value', 'putKVValueByKey', 'putKVValue'),
  kv('GET', '{bucket}/value', 'getKVValueByKey', 'getKVValue'),
  kv('DELETE', '{bucket}/value', 'deleteKVValueByKey', 'deleteKVValue'),
  kv('PUT', '{bucket}/keys/{key+}', 'putKVValue'),
  kv('GET', '{bucket}/keys/{key+}', 'getKVValue'),
  kv('DELETE', '{bucket}/keys/{key+}', 'deleteKVValue'),

  { method: 'GET', path: '/storage/objects', fn: 'objects', auth: 'gateway', scope: 'storage:read', operationId: 'listObjectStores', tag: TAGS.objects },
  objects('PUT', '{store}', 'createObjectStore'),
  objects('GET', '{store}', 'getObjectStore'),
  objects('DELETE', '{store}', 'deleteObjectStore'),
  objects('DELETE', '{store}/purge', 'purgeObjectStore'),
  objects('GET', '{store}/objects', 'listObjects'),
  // Keys in `?key=`, as for KV values; `…/objects/{key+}` (encoded twice) is kept for existing callers.
  objects('PUT', '{store}/object', 'putObjectByKey', 'putObject'),
  objects('GET', '{store}/object', 'getObjectByKey', 'getObject'),
  objects('HEAD', '{store}/object', 'headObjectByKey', 'headObject'),
  objects('DELETE', '{store}/object', 'deleteObjectByKey', 'deleteObject'),
  objects('POST', '{store}/object/url', 'createObjectUrlByKey', 'createObjectUrl'),
  objects('PUT', '{store}/objects/{key+}', 'putObject'),
  objects('GET', '{store}/objects/{key+}', 'getObject'),
  objects('HEAD', '{store}/objects/{key+}', 'headObject'),
  objects('DELETE', '{store}/objects/{key+}', 'deleteObject'),
  // `…/objects/{key}/url`: API Gateway's greedy parameter must end a path, so the handler takes the `/url` off the key.
  { ...objects('POST', '{store}/objects/{key+}', 'createObjectUrl'), documentedPath: '/storage/objects/{store}/objects/{key}/url' },
  { ...objects('POST', '{store}/uploads', 'createObjectUpload'), idempotent: true },
  { ...objects('POST', '{store}/uploads/{id}/complete', 'completeObjectUpload'), idempotent: true },
  objects('POST', '{store}/uploads/{id}/urls', 'refreshObjectUploadUrls'),
  objects('DELETE', '{store}/uploads/{id}', 'abortObjectUpload'),

  { method: 'GET', path: '/storage/streams', fn: 'streams', auth: 'gateway', scope: 'storage:read', operationId: 'listStreams', tag: TAGS.streams },
  streams('PUT', '{stream}', 'createStream'),
  streams('GET', '{stream}', 'getStream'),
  streams('DELETE', '{stream}', 'deleteStream'),
  streams('DELETE', '{stream}/purge', 'purgeStream'),
  { ...streams('POST', '{stream}/messages', 'publishMessages'), idempotent: true },
  streams('GET', '{stream}/messages', 'readMessages'),
  streams('GET', '{stream}/messages/{seq}', 'getMessage'),
  streams('GET', '{stream}/consumers', 'listConsumers'),
  streams('PUT', '{stream}/consumers/{consumer}', 'createConsumer'),
  streams('GET', '{stream}/consumers/{consumer}', 'getConsumer'),
  streams('DELETE', '{stream}/consumers/{consumer}', 'deleteConsumer'),
  streams('POST', '{stream}/consumers/{consumer}/fetch', 'fetchMessages'),
  streams('POST', '{stream}/consumers/{consumer}/ack', 'ackMessages'),
  streams('POST', '{stream}/consumers/{consumer}/nak', 'nakMessage'),
  streams('GET', '{stream}/consumers/{consumer}/dead', 'listDeadMessages'),

  { method: 'GET', path: '/storage/search', fn: 'search', auth: 'gateway', scope: 'storage:read', operationId: 'listSearchIndexes', tag: TAGS.search },
  search('PUT', '{index}', 'putSearchIndex'),
  search('GET', '{index}', 'getSearchIndex'),
  search('DELETE', '{index}', 'deleteSearchIndex'),
  search('DELETE', '{index}/purge', 'purgeSearchIndex'),
  search('POST', '{index}/documents', 'upsertSearchDocuments'),
  search('POST', '{index}/documents/delete', 'deleteSearchDocuments'),
  search('PUT', '{index}/documents/{id}', 'putSearchDocument'),
  search('GET', '{index}/documents/{id}', 'getSearchDocument'),
  search('DELETE', '{index}/documents/{id}', 'deleteSearchDocument'),
  // `search:query`: a search-only key (one index, an optional fixed filter) reaches this route and no other; any reading credential does too.
  { ...search('POST', '{index}/query', 'querySearchIndex'), scope: 'search:query' },

  mfa('totp-registration', 'startTotpRegistration'),
  mfa('confirm-totp-registration', 'confirmTotpRegistration'),
  mfa('recovery-codes/verify', 'verifyRecoveryCode'),
  mfa('totp/verify', 'verifyTotp'),
  mfa('factors', 'listFactors', 'GET'),
  mfa('factors/{id}', 'removeFactor', 'DELETE'),
  mfa('recovery-codes/regenerate', 'regenerateRecoveryCodes'),
  mfa('mfa/events', 'listMfaEvents', 'GET'),
  mfa('users/{sub}/factors', 'adminListUserFactors', 'GET', 'gateway', 'admin'),
  // Never an API key: an administrator's token with a fresh step-up proof of the administrator.
  mfa('users/{sub}/factors', 'adminResetUserFactors', 'DELETE', 'bearer', 'admin'),
  // Public: other services check step-up proofs offline against these keys.
  { method: 'GET', path: '/.well-known/jwks.json', fn: 'accounts', auth: 'none', operationId: 'getMfaJwks', tag: TAGS.mfa },

  { ...trigger('POST', '/triggers', 'createTrigger'), idempotent: true },
  trigger('GET', '/triggers', 'listTriggers'),
  trigger('GET', '/triggers/{id}', 'getTrigger'),
  trigger('PATCH', '/triggers/{id}', 'updateTrigger'),
  trigger('DELETE', '/triggers/{id}', 'deleteTrigger'),
  { ...trigger('POST', '/triggers/{id}/regenerate-url', 'regenerateTriggerUrl'), idempotent: true },
  { ...trigger('POST', '/triggers/{id}/regenerate-api-key', 'regenerateTriggerApiKey'), idempotent: true },
  { ...trigger('POST', '/triggers/{id}/rotate-signing-secret', 'rotateTriggerSigningSecret'), idempotent: true },
  trigger('POST', '/triggers/{id}/await-handshake', 'awaitTriggerHandshake'),
  trigger('GET', '/triggers/{id}/executions', 'listTriggerExecutions'),
  trigger('GET', '/triggers/{id}/executions/{execution_id}', 'getTriggerExecution'),
  { ...trigger('POST', '/triggers/{id}/executions/{execution_id}/replay', 'replayTriggerExecution'), idempotent: true },
  { ...trigger('POST', '/triggers/{id}/replay', 'replayTriggerExecutions'), idempotent: true },
  // Delivery counts by outcome, from counters kept as deliveries are recorded (functions/domain/stats/).
  trigger('GET', '/triggers/{id}/stats', 'getTriggerStats'),
  trigger('GET', '/triggers/stats', 'listTriggerStats'),
  // What a client creating a trigger chooses its flow from (the console's Flow field).
  trigger('GET', '/flows', 'listFlows'),
  // What the console draws a flow's picture from.
  trigger('GET', '/flows/{name}', 'getFlow'),
  trigger('GET', '/signature-services', 'listSignatureServices'),

  // ANY so that the receiver itself answers 404 for unknown ids before 405 for known ones.
  { method: 'ANY', path: '/webhooks/{webhook_id}', fn: 'webhook', auth: 'none', operationId: 'receiveWebhook', tag: TAGS.triggers },
];

/** API Gateway's catch-all route; answers 404 `not_found` or 405 `method_not_allowed`. */
export const DEFAULT_ROUTE = { routeKey: '$default', fn: 'system' } as const;
/**
 * The `routeKey` of every event a Lambda function URL makes (the receiver's: `lib/service-stack.ts`).
 * The same as the API's `$default`, which is another function's: to the receiver it means the URL.
 */
export const FUNCTION_URL_ROUTE_KEY = '$default';

export const routeKey = (route: Pick<RouteSpec, 'method' | 'path'>): string => `${route.method} ${route.path}`;
