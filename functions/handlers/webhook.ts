import type { Context } from 'aws-lambda';
import { randomBytes } from 'node:crypto';
import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { DynamoExecutionStore } from '../adapters/aws/dynamo-execution-store.js';
import { DynamoTriggerStore } from '../adapters/aws/dynamo-trigger-store.js';
import { sfnFlowRunnerOnFirstUse } from '../adapters/aws/sfn-on-first-use.js';
import { sqsEventQueueLoadedAhead } from '../adapters/aws/sqs-on-first-use.js';
import { portLoadedAhead } from '../adapters/lazy.js';
import { DirectFirstQueue } from '../domain/flows/direct-first-queue.js';
import type { EventQueue, WorkerInvoker } from '../domain/flows/ports.js';
import { QuietRule } from '../domain/flows/quiet-rule.js';
import { MeteredExecutionStore } from '../adapters/metered-execution-store.js';
import { NotifyingExecutionStore } from '../adapters/notifying-execution-store.js';
import type { DeliveryListeners } from '../domain/listen/ports.js';
import { CountingExecutionStore } from '../adapters/counting-execution-store.js';
import { DynamoDeliveryStats } from '../adapters/aws/dynamo-delivery-stats.js';
import { countAtOnce } from '../domain/stats/tally.js';
import { MeteredFlowRunner } from '../adapters/metered-flow-runner.js';
import { MeteredRefusalBudget } from '../adapters/metered-refusal-budget.js';
import { secretBoxFrom } from '../adapters/secret-box.js';
import type { Clock } from '../domain/clock.js';
import { RefusalBudget } from '../domain/webhooks/refusal-budget.js';
import { publicRequestUrl } from '../domain/webhooks/public-url.js';
import { receivedOn, type ReceiverUrls } from '../domain/webhooks/received-on.js';
import { receiveWebhook, type ReceiverDeps } from '../domain/webhooks/receive-webhook.js';
import { CachedTriggerLookup } from '../domain/webhooks/trigger-lookup.js';
import { API_GATEWAY_INTEGRATION_TIMEOUT_MS } from '../domain/webhooks/wait-budget.js';
import { isCorsPreflight, PREFLIGHT_ANSWER } from '../cors.js';
import type { HttpsKeyFetcher } from '../adapters/https-key-fetcher.js';
import type { KeyFetcher } from '../domain/webhooks/senders/context.js';
import type { Settings } from '../settings.js';
import { createPublicHttpHandler } from '../shared/handler.js';
import { metricsRecorder } from '../shared/metrics.js';
import { logWarn } from '../shared/logger.js';
import { json, rawBody, type HttpEvent, type HttpResult } from '../shared/http.js';

/**
 * When the answer must be sent: the gateway's limit counted from when it received the request
 * (so a cold start counts), or the function's own end, whichever comes first.
 */
function answerBy(now: Clock, receivedAtMs: number | undefined, context: Context | undefined): number | undefined {
  const limits = [
    ...(Number.isFinite(receivedAtMs) ? [receivedAtMs! + API_GATEWAY_INTEGRATION_TIMEOUT_MS] : []),
    ...(context ? [now() + context.getRemainingTimeInMillis()] : []),
  ];
  return limits.length ? Math.min(...limits) : undefined;
}

/**
 * Headers on every answer of the receiver, refusals and flows' own answers included: the receiver
 * shares its origin with the console (which keeps its token there), so nothing a trigger or a flow
 * answers may run as a page there (`sandbox` gives it an opaque origin and no script) or be sniffed
 * into one. Set last, so no flow's reply can take them off.
 */
export const RECEIVER_RESPONSE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "sandbox; default-src 'none'",
  'x-content-type-options': 'nosniff',
};

/**
 * The receiver over its dependencies.
 * @param urls Where senders are sent (the API's route, the function URL, a custom domain): which
 * trigger a request names and what URL-signing senders (Twilio) signed (`received-on.ts`).
 */
export function createWebhookHandler(deps: ReceiverDeps, urls: ReceiverUrls) {
  const handler = createReceiverHandler(deps, urls);
  return async (event: HttpEvent, context?: Context): Promise<HttpResult> => {
    const result = await handler(event, context);
    return { ...result, headers: { ...result.headers, ...RECEIVER_RESPONSE_HEADERS } };
  };
}

const createReceiverHandler = (deps: ReceiverDeps, urls: ReceiverUrls) => createPublicHttpHandler('webhook', {
  async receiveWebhook(event, context) {
    // The `ANY` route takes browsers' preflights too; answered alike for every id, known or not.
    if (isCorsPreflight(event.requestContext.http.method, event.headers)) return { ...PREFLIGHT_ANSWER };
    const door = receivedOn(event, urls);
    // A path that names no trigger is refused as an unknown id is (the id's form is checked first).
    const webhookId = door.webhookId ?? '';
    // API Gateway already lower-cases header names; verifiers and flows rely on it, so make sure.
    const headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value ?? '']));
    // An error's metric line is its log entry: it names the request. At the API's route the access
    // log line has its address and status; the function URL has no access log, so there the line
    // carries the address (what tells a flood's sources apart).
    const named = (error: unknown) => {
      metricsRecorder.note('requestId', event.requestContext.requestId);
      if (door.door === 'function_url') metricsRecorder.note('sourceIp', event.requestContext.http.sourceIp);
      throw error;
    };
    const reply = await receiveWebhook(deps, {
      webhookId,
      method: event.requestContext.http.method,
      headers,
      query: (event.queryStringParameters ?? {}) as Record<string, string>,
      rawBody: rawBody(event),
      publicUrl: publicRequestUrl(door.baseUrl, webhookId, event.rawQueryString),
      // The address the gateway's connection came from; X-Forwarded-For is the client's to write.
      sourceIp: event.requestContext.http.sourceIp,
      answerByMs: answerBy(deps.now, event.requestContext.timeEpoch, context),
    }).catch(named);
    if (reply.raw) return { statusCode: reply.status, headers: reply.headers ?? {}, body: reply.raw.body, isBase64Encoded: reply.raw.isBase64Encoded };
    return json(reply.status, reply.body, reply.headers);
  },
}, { functionUrlOperation: 'receiveWebhook' });

/**
 * The listen endpoint's pushes and listeners' answers (`websocket-listeners.ts`), loaded with the
 * first delivery of a stack with it (context `listenApi` deployed; always on the local stack, whose
 * emulator serves API Gateway's WebSocket API): the receiver's init stays as it was. `anyListener`
 * (the local stack's emulator) says false while no WebSocket is open or opening: every push would
 * then be refused 410, so the delivery skips the connections Query. Deployed there is no such
 * check, and every delivery queries.
 */
function websocketListenersOnFirstUse(settings: Settings, aws: AwsClients, anyListener?: () => boolean): DeliveryListeners {
  let made: Promise<DeliveryListeners> | undefined;
  const load = () => (made ??= import('../adapters/aws/websocket-listeners.js').then((m) => new m.WebSocketListeners(
    new m.DynamoListenConnections(dynamoClient(aws), settings.listenConnectionsTable!, () => Math.floor(Date.now() / 1000)),
    new DynamoExecutionStore(dynamoClient(aws), settings.executionsTable, Date.now),
    m.managementPosterFor(settings.listenCallbackUrl!, aws),
    { apiBaseUrl: (settings.publicWebhookBaseUrl ?? settings.webhookBaseUrl).replace(/\/webhooks\/?$/, '') },
  )));
  return { recorded: async (ref) => (anyListener?.() === false ? undefined : (await load()).recorded(ref)), answer: async (ref, withinMs) => (await load()).answer(ref, withinMs) };
}

/** The HTTPS key fetcher, loaded and made by the first delivery of a sender whose keys are fetched (SNS, PayPal, Google). */
function httpsKeyFetcherOnFirstUse(): KeyFetcher {
  let fetcher: Promise<HttpsKeyFetcher> | undefined;
  const loaded = () => (fetcher ??= import('../adapters/https-key-fetcher.js').then((m) => new m.HttpsKeyFetcher()));
  return { fetchText: async (url) => (await loaded()).fetchText(url), fetchIssuer: async (url) => (await loaded()).fetchIssuer(url) };
}

/**
 * The receiver over its settings and clients. `senderKeys` fetches senders' certificates and key
 * sets (Amazon SNS, PayPal, Google): over https from the hosts their catalog rows allow, cached;
 * a test may hand in one that serves them locally. `now` is the receiver's clock (the handshake
 * window's too), which a test may step. `anyListener`: the local stack's listen emulator, which
 * knows whether any WebSocket is open (`websocketListenersOnFirstUse`).
 */
export function composeWebhook(settings: Settings, aws: AwsClients, senderKeys: KeyFetcher = httpsKeyFetcherOnFirstUse(), now: Clock = Date.now, anyListener?: () => boolean) {
  // With the listen endpoint (its connections table and management API URL set): pushes go through API Gateway's management API.
  const listeners = settings.listenConnectionsTable && settings.listenCallbackUrl ? websocketListenersOnFirstUse(settings, aws, anyListener) : undefined;
  const triggerStore = new DynamoTriggerStore(dynamoClient(aws), settings.triggersTable, Date.now);
  const secretBox = secretBoxFrom(settings, aws);
  // Each delivery is counted by outcome as it is recorded (`GET /triggers/{id}/stats`).
  const counter = countAtOnce(new DynamoDeliveryStats(dynamoClient(aws), settings.executionsTable, Date.now), Date.now);
  // Refused and handshake records are counted by the refusal budget's grant, in the same write.
  const recorded = new CountingExecutionStore(new DynamoExecutionStore(dynamoClient(aws), settings.executionsTable, Date.now), counter, new Set(['refused', 'handshake']));
  // With listeners (`flowgate listen`'s endpoint), each delivery is pushed to them once recorded.
  const executions = new MeteredExecutionStore(listeners ? new NotifyingExecutionStore(recorded, listeners) : recorded, metricsRecorder);
  const flowQueue = sqsEventQueueLoadedAhead(settings.flowQueueUrl, aws);
  // A quiet trigger's event goes straight to the flow worker (`direct-first-queue.ts`); the signer
  // loads with the first request, as the SQS client does.
  const worker = settings.flowWorkerFunction === undefined ? undefined : portLoadedAhead<WorkerInvoker>(
    async () => (await import('../adapters/aws/lambda-event-invoker.js')).lambdaEventInvokerFor(settings.flowWorkerFunction!, aws), { invoke: true });
  const queue: EventQueue = worker
    ? new DirectFirstQueue({ queue: flowQueue.port, worker: worker.port, rule: new QuietRule(now), onFallback: (error) => void logWarn('direct invocation of the flow worker failed: event sent to the flow queue', { error: (error as Error).message }) })
    : flowQueue.port;
  const handler = createWebhookHandler({
    triggers: new CachedTriggerLookup(triggerStore, secretBox, settings.triggerCacheTtlMs, Date.now),
    executions,
    refusals: new MeteredRefusalBudget(new RefusalBudget(executions), metricsRecorder),
    queue,
    // Only wait-mode triggers run flows here: the Step Functions client loads on the first of them.
    flows: new MeteredFlowRunner(sfnFlowRunnerOnFirstUse(settings.flowArnPrefix, aws), metricsRecorder),
    now,
    newId: () => randomBytes(16).toString('hex'),
    maxBodyBytes: settings.webhookMaxBodyBytes,
    waitTimeoutMs: settings.waitTimeoutMs,
    keys: senderKeys,
    // Only an Asana or Notion handshake needs it: the trigger-management code loads with the first.
    adoptSecret: async (record, secret, options) =>
      (await import('../domain/triggers/manage-triggers.js')).adoptHandshakeSecret({ store: triggerStore, secretBox, randomBytes, now }, record, secret, options),
    ...(listeners && { listeners }),
    startedAtMs: now(),
  }, { publicBaseUrl: settings.publicWebhookBaseUrl, apiBaseUrl: settings.webhookBaseUrl, functionUrlPattern: settings.webhookFunctionUrlPattern });
  return (event: HttpEvent, context?: Context): Promise<HttpResult> => {
    flowQueue.loadAhead();
    worker?.loadAhead();
    return handler(event, context);
  };
}
