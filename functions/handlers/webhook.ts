import { randomBytes } from 'node:crypto';
import { dynamoDocumentClient } from '../adapters/aws/dynamo-client.js';
import { DynamoExecutionStore } from '../adapters/aws/dynamo-execution-store.js';
import { DynamoTriggerStore } from '../adapters/aws/dynamo-trigger-store.js';
import { sfnClient } from '../adapters/aws/sfn-client.js';
import { SfnFlowRunner } from '../adapters/aws/sfn-flow-runner.js';
import { sqsClient } from '../adapters/aws/sqs-client.js';
import { SqsEventQueue } from '../adapters/aws/sqs-event-queue.js';
import { secretBoxFromEnv } from '../adapters/secret-box-from-env.js';
import { publicRequestUrl } from '../domain/webhooks/public-url.js';
import { receiveWebhook, type ReceiverDeps } from '../domain/webhooks/receive-webhook.js';
import { CachedTriggerLookup } from '../domain/webhooks/trigger-lookup.js';
import { intEnv, queueUrl, requireEnv, tableName } from '../shared/env.js';
import { createPublicHttpHandler } from '../shared/handler.js';
import { json, pathParam, rawBody } from '../shared/http.js';

/** API Gateway gives up after 30 s; the wait must end first. */
const MAX_WAIT_TIMEOUT_MS = 28_000;

const deps: ReceiverDeps = {
  triggers: new CachedTriggerLookup(new DynamoTriggerStore(dynamoDocumentClient, tableName('triggers')), secretBoxFromEnv(), intEnv('TRIGGER_CACHE_TTL_MS', 5000)),
  executions: new DynamoExecutionStore(dynamoDocumentClient, tableName('executions')),
  queue: new SqsEventQueue(sqsClient, queueUrl('flowEvents')),
  flows: new SfnFlowRunner(sfnClient, requireEnv('FLOW_STATE_MACHINE_ARN_PREFIX')),
  now: () => new Date(),
  newId: () => randomBytes(16).toString('hex'),
  maxBodyBytes: intEnv('WEBHOOK_MAX_BODY_BYTES', 1024 * 1024),
  waitTimeoutMs: Math.min(intEnv('WAIT_TIMEOUT_MS', 25_000), MAX_WAIT_TIMEOUT_MS),
};
const publicBaseUrl = process.env.PUBLIC_WEBHOOK_BASE_URL;

export const handler = createPublicHttpHandler('webhook', {
  async receiveWebhook(event) {
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
    });
    return json(reply.status, reply.body, reply.headers);
  },
});
