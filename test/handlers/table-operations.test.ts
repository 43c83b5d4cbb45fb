import { createAwsClients } from '../../functions/adapters/aws/clients.js';
import { dynamoClient } from '../../functions/adapters/aws/clients/dynamo.js';
import { s3Client } from '../../functions/adapters/aws/clients/s3.js';
import { COMPOSERS } from '../../functions/composition.js';
import { readSettings } from '../../functions/settings.js';
import { encodeSweepTask } from '../../functions/domain/kv/sweep-task.js';
import { LOCAL_AWS_ENV } from '../../local/engines.js';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { QueryCommand, ScanCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FUNCTIONS, QUEUES, ROUTES, TABLES, type FunctionName, type FunctionSpec, type QueueName, type TableName } from '../../functions/manifest.js';
import type { HttpEvent, HttpResult } from '../../functions/shared/http.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { generateLocalSigningKey } from '../../functions/adapters/local-token-signer.js';
import { mintLocalToken } from '../../local/token.js';
import { useEngines } from '../support/engines.js';
import { totpCodeAt } from '../support/totp.js';

/**
 * The deployed roles may send exactly the DynamoDB operations the manifest lists (the template
 * tests hold the stack to that). Locally nothing enforces IAM, so a handler that starts sending
 * an operation its function was not granted would pass every other test and fail only when
 * deployed. Here each handler runs through every route and consumer path, one call at a time,
 * and what it sends is recorded as its function's, then compared with the manifest.
 */

const JWT_SECRET = randomBytes(32).toString('base64url');
/** In FLOW_NAMES but not deployed: starting it fails, which exercises the receiver's clean-up. */
const MISSING_FLOW = 'not-deployed';

const local = useEngines();

type Handler = (event: any, context?: Context) => Promise<any>;
const handlers = {} as Record<Exclude<FunctionName, 'system'>, Handler>;
/** The receiver built with an unreachable flow queue, as in an SQS outage. */
let webhookQueueDown: Handler;
/** The trigger routes built with the same unreachable flow queue: a replay the queue refuses. */
let triggersQueueDown: Handler;

/** What each function sent, by table: `PutItem`, `Query`, … */
const sent = new Map<FunctionName, Map<TableName, Set<string>>>();
let current: FunctionName | undefined;

function record(client: DynamoDBDocumentClient, tableOf: (name: string) => TableName) {
  client.middlewareStack.add((next, context) => async (args) => {
    const input = args.input as { TableName?: string; RequestItems?: Record<string, unknown> };
    if (!current) throw new Error(`${context.commandName} sent outside a handler call`);
    for (const table of input.TableName ? [input.TableName] : Object.keys(input.RequestItems ?? {})) {
      const byTable = sent.get(current) ?? new Map<TableName, Set<string>>();
      const operations = byTable.get(tableOf(table)) ?? new Set<string>();
      operations.add(context.commandName!.replace(/Command$/, ''));
      byTable.set(tableOf(table), operations);
      sent.set(current, byTable);
    }
    return next(args);
  }, { step: 'initialize', name: 'recordTableOperations' });
}

/** Runs one handler call with what it sends counted as `fn`'s. */
async function as<T>(fn: FunctionName, call: () => Promise<T>): Promise<T> {
  current = fn;
  try {
    return await call();
  } finally {
    current = undefined;
  }
}

const routeOf = (operationId: string) => ROUTES.find((r) => r.operationId === operationId)!;

/** An API Gateway payload 2.0 event for a route of the route table. */
function httpEvent(operationId: string, options: { params?: Record<string, string>; query?: Record<string, string>; token?: string; apiKey?: string; body?: unknown; rawBody?: string } = {}): HttpEvent {
  const route = routeOf(operationId);
  const rawPath = route.path.replace(/\{(\w+)\+?\}/g, (_, name: string) => options.params![name]!);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  return {
    version: '2.0', routeKey: `${route.method} ${route.path}`, rawPath, rawQueryString: new URLSearchParams(options.query).toString(), headers,
    pathParameters: options.params, queryStringParameters: options.query,
    requestContext: { http: { method: route.method === 'ANY' ? 'POST' : route.method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' }, domainName: '127.0.0.1', requestId: 'r' },
    body, isBase64Encoded: false,
  } as unknown as HttpEvent;
}

const data = (result: HttpResult) => JSON.parse(result.body!).data;
const withHeader = (event: HttpEvent, name: string, value: string): HttpEvent => ({ ...event, headers: { ...event.headers, [name]: value } });

/** An SQS event of these messages, as the event source mapping hands them to `queue`'s consumer. */
const sqsEventOf = (queue: QueueName, messages: { MessageId?: string; ReceiptHandle?: string; Body?: string; MD5OfBody?: string }[]): SQSEvent => ({
  Records: messages.map((m) => ({
    messageId: m.MessageId!, receiptHandle: m.ReceiptHandle!, body: m.Body!, messageAttributes: {}, md5OfBody: m.MD5OfBody ?? '',
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()), SenderId: 'local', ApproximateFirstReceiveTimestamp: String(Date.now()) },
    eventSource: 'aws:sqs', eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queue}`, awsRegion: 'us-east-1',
  })),
});

/** Whether a queue holds no message: none visible, received or delayed. */
async function queueEmpty(url: string): Promise<boolean> {
  const { Attributes = {} } = await local.sqs.send(new GetQueueAttributesCommand({
    QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
  }));
  return Number(Attributes.ApproximateNumberOfMessages) + Number(Attributes.ApproximateNumberOfMessagesNotVisible) + Number(Attributes.ApproximateNumberOfMessagesDelayed) === 0;
}

/** Feeds a queue's waiting messages to its consumer, as the event source mapping would. */
async function drain(queue: QueueName): Promise<number> {
  const url = local.engines.queueUrls[queue];
  const consumer = QUEUES[queue].consumer;
  let handled = 0;
  for (let quietSince = Date.now(); ;) {
    // Sweeps are sent with a delay (and may schedule their final pass): wait for them, until 3 s pass
    // with nothing received (what is delayed longer is left, as a settle time of an hour), or at once
    // when the queue holds nothing at all, delayed or in flight (the flow queue, every time).
    const { Messages = [] } = await local.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, AttributeNames: ['All'], WaitTimeSeconds: 1, VisibilityTimeout: 120 }));
    if (Messages.length === 0) {
      if (Date.now() - quietSince >= 3000 || await queueEmpty(url)) return handled;
      continue;
    }
    const event = sqsEventOf(queue, Messages);
    const response = await as(consumer, () => handlers[consumer as Exclude<FunctionName, 'system'>](event, lambdaContext(consumer, FUNCTIONS[consumer].timeoutSeconds)));
    expect(response.batchItemFailures, `${consumer} failed a record`).toEqual([]);
    for (const m of Messages) await local.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle! }));
    handled += Messages.length;
    quietSince = Date.now();
  }
}

const localClients = () => createAwsClients({
  region: LOCAL_AWS_ENV.AWS_REGION,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  endpoints: { dynamodb: local.engines.env.AWS_ENDPOINT_URL_DYNAMODB, sqs: local.engines.env.AWS_ENDPOINT_URL_SQS, sfn: local.engines.env.AWS_ENDPOINT_URL_SFN, s3: local.engines.env.AWS_ENDPOINT_URL_S3 },
});

/** What each function sent to the objects bucket: `PutObject`, … */
const sentToBucket = new Map<FunctionName, Set<string>>();
function recordBucket(client: ReturnType<typeof s3Client>) {
  client.middlewareStack.add((next, context) => async (args) => {
    if (!current) throw new Error(`${context.commandName} sent outside a handler call`);
    sentToBucket.set(current, (sentToBucket.get(current) ?? new Set<string>()).add(context.commandName!.replace(/Command$/, '')));
    return next(args);
  }, { step: 'initialize', name: 'recordBucketOperations' });
}

beforeAll(async () => {
  const env: Record<string, string> = {
    ...local.engines.env,
    AUTH_JWT_SECRET: JWT_SECRET,
    LOCAL_SECRETS_KEY: randomBytes(32).toString('base64'),
    LOCAL_MFA_SIGNING_KEYS: generateLocalSigningKey(),
    MFA_TOKEN_ISSUER: 'http://127.0.0.1',
    FLOW_NAMES: `echo,${MISSING_FLOW}`,
    WEBHOOK_BASE_URL: 'http://127.0.0.1/webhooks',
    // The sweeper's final pass comes at once rather than after the deployed settle time.
    KV_SWEEP_SETTLE_SECONDS: '0',
    OBJECT_EXPIRY_SWEEP_SECONDS: '1',
    // Search indexes' tables (LanceDB) in a directory; the search function reads only the auth table.
    SEARCH_DATA_URI: mkdtempSync(join(tmpdir(), 'flowgate-grants-search-')),
  };
  const tableByName = new Map((Object.entries(TABLES) as [TableName, { env: string }][]).map(([table, spec]) => [env[spec.env]!, table]));
  const tableOf = (name: string) => {
    const table = tableByName.get(name);
    if (!table) throw new Error(`unknown table ${name}`);
    return table;
  };

  // Each handler as the composition root builds it, over clients whose calls are recorded.
  const aws = localClients();
  for (const name of ['apiKeys', 'kv', 'kvSweeper', 'objects', 'streams', 'search', 'accounts', 'triggers', 'webhook', 'flowWorker'] as const) {
    Object.assign(handlers, { [name]: COMPOSERS[name](readSettings(name, env), aws) });
  }
  record(dynamoClient(aws), tableOf);
  recordBucket(s3Client(aws));

  // A second receiver whose queue is down, over clients of its own.
  vi.stubEnv('AWS_MAX_ATTEMPTS', '1');
  const awsQueueDown = localClients();
  webhookQueueDown = COMPOSERS.webhook(readSettings('webhook', { ...env, FLOW_QUEUE_URL: 'http://127.0.0.1:9/000000000000/unreachable' }), awsQueueDown);
  triggersQueueDown = COMPOSERS.triggers(readSettings('triggers', { ...env, FLOW_QUEUE_URL: 'http://127.0.0.1:9/000000000000/unreachable' }), awsQueueDown);
  record(dynamoClient(awsQueueDown), tableOf);
}, 60_000);
// Test files share their worker's process (vitest.config.ts): the next file's clients retry as usual.
afterAll(() => vi.unstubAllEnvs());

describe('the DynamoDB operations each function sends are the ones the manifest grants it', () => {
  it('through every route and consumer', async () => {
    // An administrator: it also mints an admin key and resets a user's factors below.
    const token = await mintLocalToken({ secret: JWT_SECRET, sub: 'grants-user', claims: { 'cognito:groups': ['flowgate-admins'] } });
    const { apiKeys, kv, objects, streams, search, accounts, triggers, webhook } = handlers;

    // API keys: issue two, list, revoke one (a user's token: keys cannot manage keys), the events;
    // the other authenticates the gateway calls below.
    const spare = data(await as('apiKeys', () => apiKeys(httpEvent('createApiKey', { token }))));
    const { api_key: apiKey } = data(await as('apiKeys', () => apiKeys(httpEvent('createApiKey', { token }))));
    expect(data(await as('apiKeys', () => apiKeys(httpEvent('listApiKeys', { token })))).api_keys).toHaveLength(2);
    expect((await as('apiKeys', () => apiKeys(httpEvent('revokeApiKey', { token, params: { id: spare.id } })))).statusCode).toBe(204);
    expect(data(await as('apiKeys', () => apiKeys(httpEvent('listApiKeyEvents', { token })))).events).toHaveLength(3);

    // KV: every route, then the sweeps the purge and the delete left behind.
    const bucket = { bucket: 'grants' };
    const key = { ...bucket, key: 'a/b' };
    const kvCalls: [string, Record<string, string>, unknown?][] = [
      ['createKVBucket', bucket], ['listKVBuckets', {}], ['getKVBucket', bucket], ['putKVValue', key, { v: 1 }], ['getKVValue', key], ['listKVKeys', bucket],
      ['deleteKVValue', key], ['putKVValue', key, { v: 2 }], ['purgeKVBucket', bucket], ['putKVValue', key, { v: 3 }], ['deleteKVBucket', bucket],
    ];
    for (const [operationId, params, body] of kvCalls) {
      const result = await as('kv', () => kv(httpEvent(operationId, { apiKey, params, body })));
      expect(result.statusCode, operationId).toBeLessThan(300);
    }
    expect(await drain('kvSweep')).toBeGreaterThan(0);

    // Object stores: every route, ending with the store deleted once empty.
    const store = { store: 'grants' };
    const object = { ...store, key: 'a/b' };
    const objectCalls: [string, Record<string, string>, string?][] = [
      ['createObjectStore', store], ['listObjectStores', {}], ['getObjectStore', store], ['putObject', object, 'bytes'], ['getObject', object],
      ['headObject', object], ['createObjectUrl', { ...store, key: 'a/b/url' }, '{}'], ['listObjects', store], ['deleteObject', object],
    ];
    for (const [operationId, params, rawBody] of objectCalls) {
      const result = await as('objects', () => objects(httpEvent(operationId, { apiKey, params, rawBody })));
      expect(result.statusCode, operationId).toBeLessThan(300);
    }
    // Presigned uploads: one PUT completed, one multipart aborted, one multipart completed.
    const upload = async (size: number) => data(await as('objects', () => objects(httpEvent('createObjectUpload', { apiKey, params: store, body: { key: 'up', size } }))));
    const single = await upload(3);
    expect((await fetch(single.url, { method: 'PUT', headers: single.headers, body: 'abc' })).status).toBe(200);
    expect((await as('objects', () => objects(httpEvent('completeObjectUpload', { apiKey, params: { ...store, id: single.id } })))).statusCode).toBe(200);
    const aborted = await upload(6 * 1024 * 1024);
    expect((await as('objects', () => objects(httpEvent('abortObjectUpload', { apiKey, params: { ...store, id: aborted.id } })))).statusCode).toBe(204);
    const multipart = await upload(6 * 1024 * 1024);
    const parts: { part_number: number; etag: string | null }[] = [];
    for (const part of multipart.parts) {
      const sent = await fetch(part.url, { method: 'PUT', body: new Uint8Array(part.size) });
      parts.push({ part_number: part.part_number, etag: sent.headers.get('etag') });
    }
    expect((await as('objects', () => objects(httpEvent('completeObjectUpload', { apiKey, params: { ...store, id: multipart.id }, body: { parts } })))).statusCode).toBe(200);
    expect((await as('objects', () => objects(httpEvent('deleteObject', { apiKey, params: { ...store, key: 'up' } })))).statusCode).toBe(204);
    // Expiry: an object of a store with a TTL and two uploads left open; the pass two days on removes them all.
    const expiring = { store: 'expiring' };
    expect((await as('objects', () => objects(httpEvent('createObjectStore', { apiKey, params: expiring, body: { ttl_seconds: 1 } })))).statusCode).toBe(201);
    expect((await as('objects', () => objects(httpEvent('putObject', { apiKey, params: { ...expiring, key: 'k' }, rawBody: 'v' })))).statusCode).toBe(200);
    const leftOpen = async (size: number) => data(await as('objects', () => objects(httpEvent('createObjectUpload', { apiKey, params: expiring, body: { key: 'open', size } }))));
    const openSingle = await leftOpen(3);
    expect((await fetch(openSingle.url, { method: 'PUT', headers: openSingle.headers, body: 'abc' })).status).toBe(200);
    await leftOpen(6 * 1024 * 1024);
    const { Items: [storeItem] = [] } = await local.dynamo.send(new ScanCommand({ TableName: local.engines.env.KV_TABLE, FilterExpression: 'begins_with(pk, :p) AND sk = :name', ExpressionAttributeValues: { ':p': 'OBJSTORES#', ':name': 'expiring' } }));
    // The uploads' lifetime (a day) is over: their entries are aged rather than the clock moved (S3 refuses skewed requests).
    const storeId = storeItem!.id as string;
    const generation = storeItem!.generation as string;
    const { Items: openUploads = [] } = await local.dynamo.send(new QueryCommand({ TableName: local.engines.env.KV_TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `OBJUPLOAD#${storeId}#${generation}` } }));
    expect(openUploads).toHaveLength(2);
    for (const item of openUploads) await local.dynamo.send(new UpdateCommand({ TableName: local.engines.env.KV_TABLE, Key: { pk: item.pk, sk: item.sk }, UpdateExpression: 'SET live_until = :past', ExpressionAttributeValues: { ':past': 1 } }));
    // The object's TTL is one second: wait until it reads as expired.
    while ((await as('objects', () => objects(httpEvent('headObject', { apiKey, params: { ...expiring, key: 'k' } })))).statusCode !== 404) await new Promise((resolve) => setTimeout(resolve, 200));
    const body = encodeSweepTask({ kind: 'object_expiry', accountId: (storeItem!.pk as string).slice('OBJSTORES#'.length), name: 'expiring', objectStoreId: storeId, generation, settleUntil: Date.now() });
    const swept = await as('kvSweeper', () => handlers.kvSweeper(sqsEventOf('kvSweep', [{ MessageId: 'expiry', ReceiptHandle: 'r', Body: body }]), lambdaContext('kvSweeper', FUNCTIONS.kvSweeper.timeoutSeconds)));
    expect(swept.batchItemFailures).toEqual([]);
    expect(data(await as('objects', () => objects(httpEvent('getObjectStore', { apiKey, params: expiring }))))).toMatchObject({ objects: 0, bytes: 0 });
    expect((await as('objects', () => objects(httpEvent('deleteObjectStore', { apiKey, params: expiring })))).statusCode).toBe(204);
    // A purge and the delete of a store that holds objects, then the sweeps they left (bytes and catalog entries).
    expect((await as('objects', () => objects(httpEvent('putObject', { apiKey, params: object, rawBody: 'old' })))).statusCode).toBe(200);
    expect((await as('objects', () => objects(httpEvent('purgeObjectStore', { apiKey, params: store })))).statusCode).toBe(200);
    expect((await as('objects', () => objects(httpEvent('putObject', { apiKey, params: object, rawBody: 'new' })))).statusCode).toBe(200);
    expect((await as('objects', () => objects(httpEvent('deleteObjectStore', { apiKey, params: store })))).statusCode).toBe(204);
    expect(await drain('kvSweep')).toBeGreaterThan(0);

    // Streams: every route; retention (max_msgs 2) also sweeps what it dropped.
    const stream = { stream: 'grants' };
    const consumer = { ...stream, consumer: 'c' };
    const streamCalls: [string, Record<string, string>, unknown?, Record<string, string>?][] = [
      ['createStream', stream, { max_msgs: 2 }], ['listStreams', {}], ['publishMessages', stream, { messages: [{ data: 1, msg_id: 'a' }, { data: 2 }, { data: 3 }] }],
      ['getStream', stream], ['readMessages', stream, undefined, { after_seq: '0' }], ['getMessage', { ...stream, seq: '3' }],
      ['createConsumer', consumer, { ack_wait_seconds: 1 }], ['getConsumer', consumer], ['fetchMessages', consumer, { batch: 2 }],
      ['nakMessage', consumer, { seq: 2 }], ['ackMessages', consumer, { seqs: [3] }], ['ackMessages', consumer, { seqs: [2, 3] }], ['listDeadMessages', consumer],
      ['deleteConsumer', consumer], ['purgeStream', stream], ['deleteStream', stream],
    ];
    for (const [operationId, params, body, query] of streamCalls) {
      const result = await as('streams', () => streams(httpEvent(operationId, { apiKey, params, body, query })));
      expect(result.statusCode, `${operationId} ${result.body}`).toBeLessThan(300);
    }

    // Search indexes: the API key is looked up; the index itself lives in LanceDB, not in a table.
    const index = { index: 'grants' };
    for (const [operationId, params, body] of [['putSearchIndex', index, { searchable_fields: ['t'] }], ['upsertSearchDocuments', index, { documents: [{ id: '1', t: 'x' }] }], ['querySearchIndex', index, { q: 'x' }], ['listSearchIndexes', {}]] as const) {
      const result = await as('search', () => search(httpEvent(operationId, { apiKey, params, body })));
      expect(result.statusCode, `${operationId} ${result.body}`).toBeLessThan(300);
    }

    // Accounts: start, a wrong code, the right code, a recovery code.
    const { secret } = data(await as('accounts', () => accounts(httpEvent('startTotpRegistration', { token }))));
    const wrong = String((Number(totpCodeAt(secret, Date.now())) + 500_000) % 1_000_000).padStart(6, '0');
    expect((await as('accounts', () => accounts(httpEvent('confirmTotpRegistration', { token, body: { secret, code: wrong } })))).statusCode).toBe(400);
    const confirmed = await as('accounts', () => accounts(httpEvent('confirmTotpRegistration', { token, body: { secret, code: totpCodeAt(secret, Date.now()) } })));
    const [recoveryCode, adminKeyCode, resetCode] = data(confirmed).recovery_codes;
    expect((await as('accounts', () => accounts(httpEvent('verifyRecoveryCode', { token, body: { code: recoveryCode } })))).statusCode).toBe(200);
    // An admin key (a proof spent, the key and its event written to the auth table), the account's view of the user with it, the user's own, and the events.
    const proofFor = async (code: string, purpose: string) => data(await as('accounts', () => accounts(httpEvent('verifyRecoveryCode', { token, body: { code, purpose } })))).mfa_token as string;
    const adminProof = await proofFor(adminKeyCode, 'mint_admin_key');
    const adminKey = await as('accounts', () => accounts(withHeader(httpEvent('createAdminApiKey', { token }), 'x-mfa-token', adminProof)));
    expect(adminKey.statusCode, adminKey.body).toBe(201);
    expect((await as('accounts', () => accounts(httpEvent('adminListUserFactors', { apiKey: data(adminKey).api_key, params: { sub: 'grants-user' } })))).statusCode).toBe(200);
    expect((await as('accounts', () => accounts(httpEvent('listFactors', { token })))).statusCode).toBe(200);
    expect((await as('accounts', () => accounts(httpEvent('listMfaEvents', { token })))).statusCode).toBe(200);
    const resetProof = await proofFor(resetCode, 'admin_reset');
    const reset = await as('accounts', () => accounts(withHeader(httpEvent('adminResetUserFactors', { token, params: { sub: 'grants-user' } }), 'x-mfa-token', resetProof)));
    expect(reset.statusCode, reset.body).toBe(204);

    // Triggers: one per delivery path below, each changed in every way the API offers.
    const create = async (settings: Record<string, unknown>) => data(await as('triggers', () => triggers(httpEvent('createTrigger', { apiKey, body: settings }))));
    const waits = await create({ flow: 'echo', response_mode: 'wait', deduplicate: true });
    const acknowledges = await create({ flow: 'echo', deduplicate: true, api_key_enabled: true });
    const missing = await create({ flow: MISSING_FLOW, response_mode: 'wait' });
    const filtered = await create({ flow: 'echo', event_filter: ['wanted'] });
    const id = { id: acknowledges.id };
    for (const [operationId, body] of [['getTrigger'], ['listTriggers'], ['updateTrigger', { enabled: true }], ['regenerateTriggerUrl']] as const) {
      const result = await as('triggers', () => triggers(httpEvent(operationId, { apiKey, params: id, body })));
      expect(result.statusCode, operationId).toBe(200);
    }
    const acknowledging = data(await as('triggers', () => triggers(httpEvent('regenerateTriggerApiKey', { apiKey, params: id }))));

    // The receiver: wait, acknowledge (small and stored-aside), ignored, a duplicate, a flow
    // that cannot start, and a queue that cannot take the event.
    const webhookIdOf = (trigger: { url: string }) => trigger.url.split('/').pop()!;
    const deliver = (handler: Handler, trigger: { url: string; api_key?: string }, body: unknown) =>
      as('webhook', () => handler(httpEvent('receiveWebhook', { params: { webhook_id: webhookIdOf(trigger) }, apiKey: trigger.api_key, rawBody: JSON.stringify(body) })));
    expect((await deliver(webhook, waits, { id: 'evt_wait', type: 'ping' })).statusCode).toBe(200);
    expect((await deliver(webhook, acknowledging, { id: 'evt_ack', type: 'ping' })).statusCode).toBe(200);
    expect(JSON.parse((await deliver(webhook, acknowledging, { id: 'evt_ack', type: 'ping' })).body).status).toBe('duplicate');
    // Over the queue's inline limit once the receiver has added its top-level copies, so stored aside.
    expect((await deliver(webhook, acknowledging, { id: 'evt_big', type: 'big', blob: 'x'.repeat(110_000) })).statusCode).toBe(200);
    expect(JSON.parse((await deliver(webhook, filtered, { id: 'evt_other', type: 'other' })).body).status).toBe('ignored');
    expect((await deliver(webhook, missing, { id: 'evt_missing', type: 'ping' })).statusCode).toBe(502);
    expect((await deliver(webhookQueueDown, acknowledging, { id: 'evt_down', type: 'ping' })).statusCode).toBe(503);
    // Notion's handshake hands its secret over: the receiver seals it and stores the trigger.
    const notion = await create({ flow: 'echo', signature: { service: 'notion' } });
    expect((await deliver(webhook, notion, { verification_token: 'secret_table_operations' })).statusCode).toBe(200);

    // The worker runs the queued events, the stored-aside one included.
    expect(await drain('flowEvents')).toBe(2);

    // The owner reads the deliveries, then deletes the triggers.
    const executions = data(await as('triggers', () => triggers(httpEvent('listTriggerExecutions', { apiKey, params: id }))));
    expect(executions.executions.map((e: { status: string }) => e.status).sort()).toEqual(['duplicate', 'succeeded', 'succeeded']);

    // Delivery counts: one trigger's by minute and by hour, and a page of triggers'.
    for (const [operationId, query] of [['getTriggerStats', { bucket: 'minute' }], ['getTriggerStats', {}], ['listTriggerStats', {}]] as const) {
      expect((await as('triggers', () => triggers(httpEvent(operationId, { apiKey, params: id, query })))).statusCode, operationId).toBe(200);
    }

    // Inspecting and replaying: one delivery in detail, the deliveries of its event, one replay, a
    // bulk replay, and a replay the queue refuses (its record is taken back).
    const delivered = executions.executions.find((e: { status: string }) => e.status === 'succeeded');
    const one = { ...id, execution_id: delivered.execution_id };
    expect(data(await as('triggers', () => triggers(httpEvent('getTriggerExecution', { apiKey, params: one })))).request.method).toBe('POST');
    const ofEvent = data(await as('triggers', () => triggers(httpEvent('listTriggerExecutions', { apiKey, params: id, query: { event_id: delivered.event_id } }))));
    expect(ofEvent.executions.length).toBeGreaterThanOrEqual(1);
    expect((await as('triggers', () => triggers(httpEvent('replayTriggerExecution', { apiKey, params: one })))).statusCode).toBe(202);
    expect(data(await as('triggers', () => triggers(httpEvent('replayTriggerExecutions', { apiKey, params: id, body: { status: ['duplicate'] } })))).replayed).toBe(1);
    expect((await as('triggers', () => triggersQueueDown(httpEvent('replayTriggerExecution', { apiKey, params: one })))).statusCode).toBe(503);
    expect(await drain('flowEvents')).toBe(2);
    for (const trigger of [waits, acknowledges, missing, filtered]) {
      expect((await as('triggers', () => triggers(httpEvent('deleteTrigger', { apiKey, params: { id: trigger.id } })))).statusCode).toBe(204);
    }

    const granted = Object.fromEntries((Object.entries(FUNCTIONS) as [FunctionName, FunctionSpec][]).map(([name, spec]) =>
      [name, Object.fromEntries(Object.entries(spec.tables).map(([table, operations]) => [table, [...operations!].sort()]))]));
    const used = Object.fromEntries((Object.keys(FUNCTIONS) as FunctionName[]).map((name) =>
      [name, Object.fromEntries([...(sent.get(name) ?? new Map<TableName, Set<string>>())].map(([table, operations]) => [table, [...operations].sort()]))]));
    // Not only nothing beyond the grants (a deploy would refuse it): nothing granted goes unused.
    expect(used).toEqual(granted);
    const bucketGrants = Object.fromEntries((Object.entries(FUNCTIONS) as [FunctionName, FunctionSpec][]).filter(([, spec]) => spec.objectsBucket).map(([name, spec]) => [name, [...spec.objectsBucket!].sort()]));
    expect(Object.fromEntries([...sentToBucket].map(([name, operations]) => [name, [...operations].sort()]))).toEqual(bucketGrants);
  }, 120_000);
});
