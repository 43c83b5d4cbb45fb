import type { Context } from 'aws-lambda';
import { randomBytes } from 'node:crypto';
import { dynamoDocumentClient } from '../adapters/aws/dynamo-client.js';
import { DynamoExecutionStore } from '../adapters/aws/dynamo-execution-store.js';
import { DynamoTriggerStore } from '../adapters/aws/dynamo-trigger-store.js';
import { sfnFlowRunnerOnFirstUse } from '../adapters/aws/sfn-on-first-use.js';
import { sqsClient } from '../adapters/aws/sqs-client.js';
import { SqsEventQueue } from '../adapters/aws/sqs-event-queue.js';
import { secretBoxFromEnv } from '../adapters/secret-box-from-env.js';
import { DEFAULT_WEBHOOK_MAX_BODY_BYTES } from '../domain/webhooks/body-limit.js';
import { publicRequestUrl } from '../domain/webhooks/public-url.js';
import { receiveWebhook, type ReceiverDeps } from '../domain/webhooks/receive-webhook.js';
import { CachedTriggerLookup } from '../domain/webhooks/trigger-lookup.js';
import { API_GATEWAY_INTEGRATION_TIMEOUT_MS, MAX_WAIT_TIMEOUT_MS } from '../domain/webhooks/wait-budget.js';
import { intEnv, queueUrl, requireEnv, tableName } from '../shared/env.js';
import { createPublicHttpHandler } from '../shared/handler.js';
import { json, pathParam, rawBody } from '../shared/http.js';

const deps: ReceiverDeps = {
  triggers: new CachedTriggerLookup(new DynamoTriggerStore(dynamoDocumentClient, tableName('triggers')), secretBoxFromEnv(), intEnv('TRIGGER_CACHE_TTL_MS', 5000)),
  executions: new DynamoExecutionStore(dynamoDocumentClient, tableName('executions')),
  queue: new SqsEventQueue(sqsClient, queueUrl('flowEvents')),
  // Only wait-mode triggers run flows here: the Step Functions client loads on the first of them.
  flows: sfnFlowRunnerOnFirstUse(requireEnv('FLOW_STATE_MACHINE_ARN_PREFIX')),
  now: () => new Date(),
  newId: () => randomBytes(16).toString('hex'),
  maxBodyBytes: intEnv('WEBHOOK_MAX_BODY_BYTES', DEFAULT_WEBHOOK_MAX_BODY_BYTES),
  waitTimeoutMs: Math.min(intEnv('WAIT_TIMEOUT_MS', 25_000), MAX_WAIT_TIMEOUT_MS),
};
const publicBaseUrl = process.env.PUBLIC_WEBHOOK_BASE_URL;

/**
 * When the answer must be sent: the gateway's limit counted from when it received the request
 * (so a cold start counts), or the function's own end, whichever comes first.
 */
function answerBy(receivedAtMs: number | undefined, context: Context | undefined): number | undefined {
  const limits = [
    ...(Number.isFinite(receivedAtMs) ? [receivedAtMs! + API_GATEWAY_INTEGRATION_TIMEOUT_MS] : []),
    ...(context ? [Date.now() + context.getRemainingTimeInMillis()] : []),
  ];
  return limits.length ? Math.min(...limits) : undefined;
}

export const handler = createPublicHttpHandler('webhook', {
  async receiveWebhook(event, context) {
    const webhookId = pathParam(event, 'webhook_id');
    // API Gateway already lower-cases header names; verifiers and flows rely on it, so make sure.
    const headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value ?? '']));
    const reply = await receiveWebhook(deps, {
      webhookId,
      method: event.requestContext.http.method,
      headers,
      query: (event.queryStringParameters ?? {}) as Record<string, string>,
      rawBody: rawBody(event),
      publicUrl: publicRequestUrl({ headers, domainName: event.requestContext.domainName, rawPath: event.rawPath, rawQueryString: event.rawQueryString }, webhookId, publicBaseUrl),
      answerByMs: answerBy(event.requestContext.timeEpoch, context),
    });
    return json(reply.status, reply.body, reply.headers);
  },
});
