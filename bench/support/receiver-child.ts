/**
 * The receiver bench's measurement, in a process of its own so that the handlers are imported
 * afresh with this bench's settings (module-scope clients of an earlier bench in the same run
 * would point at engines that are gone). See receiver.bench.ts for what is measured and why.
 * The engines run in a further child, so this process's CPU time is the handler's own.
 */
import { randomBytes } from 'node:crypto';
import { DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { LOCAL_AWS_ENV } from '../../local/engines.js';
import { mintLocalToken } from '../../local/token.js';
import { signStripe } from '../../test/support/signers.js';
import { apiGatewayEvent } from './api-gateway-events.js';
import { verifyStripeByHand } from './baselines.js';
import { serveParent, startChild } from './child.js';
import { jsonEvent, KB } from './payloads.js';
import { measureCpu, median } from './timing.js';

const BODY_BYTES = KB;
const ROUNDS = 7;
const WARMUP_EVENTS = 300;
const FLOOR_WARMUP_EVENTS = 100;
const HANDLER_EVENTS = 200;
const BASELINE_EVENTS = 20_000;

type Handler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;
interface Engines {
  env: Record<string, string>;
  queueUrls: Record<'flowEvents' | 'kvSweep', string>;
}
interface PerEvent {
  wallUs: number;
  cpuUs: number;
  enginesCpuUs: number;
}

export interface PerEventSummary {
  wall_us_per_event: number;
  cpu_us_per_event: number;
  engines_cpu_us_per_event: number;
}

export interface ReceiverMeasurement {
  body_bytes: number;
  rounds: number;
  events_per_round: { handler: number; baseline: number };
  handler: PerEventSummary;
  sdk_floor: PerEventSummary;
  baseline: PerEventSummary;
  /** Per round, bare wall time ÷ handler wall time; the median. */
  ratio: number;
  cpu_ratio: number;
  flow_queue_messages: number;
  expected_messages: number;
}

async function measure(): Promise<ReceiverMeasurement> {
  const engines = await startChild<Engines>('engines-child.ts');
  const jwtSecret = randomBytes(32).toString('base64url');
  Object.assign(process.env, engines.info.env, {
    AUTH_JWT_SECRET: jwtSecret,
    LOCAL_SECRETS_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_BASE_URL: 'https://api.example.com/webhooks',
    FLOW_NAMES: 'echo',
  });
  // Handlers read their settings at import, so only now.
  const webhook = (await import('../../functions/entries/webhook.js')).handler as Handler;
  const triggers = (await import('../../functions/entries/triggers.js')).handler as Handler;
  // Clients configured as the handlers' are (from the environment), to time the same SDK calls.
  const aws = (await import('../../functions/adapters/aws/clients.js')).createAwsClients();
  const dynamoDocumentClient = (await import('../../functions/adapters/aws/clients/dynamo.js')).dynamoClient(aws);
  const sqsClient = (await import('../../functions/adapters/aws/clients/sqs.js')).sqsClient(aws);

  const signingSecret = `whsec_${randomBytes(24).toString('base64url')}`;
  const created = await triggers(apiGatewayEvent({
    method: 'POST',
    routeKey: 'POST /triggers',
    rawPath: '/triggers',
    headers: { authorization: `Bearer ${await mintLocalToken({ secret: jwtSecret, sub: 'bench' })}`, 'content-type': 'application/json' },
    body: JSON.stringify({ flow: 'echo', response_mode: 'acknowledge', signature: { service: 'stripe', secret: signingSecret } }),
  }));
  if (created.statusCode !== 201) throw new Error(`creating the trigger failed: ${created.statusCode} ${created.body}`);
  const webhookId = (JSON.parse(created.body!) as { data: { webhook_id: string } }).data.webhook_id;

  const body = jsonEvent(BODY_BYTES);
  let eventsSigned = 0;
  /**
   * Signed afresh each round (Stripe's tolerance is five minutes), and each its own event: the
   * receiver answers a signed delivery it has already taken as a replay (`duplicate`) without
   * recording or queueing it, which is not what a delivery costs.
   */
  const signedEvent = (eventBody = jsonEvent(BODY_BYTES, `evt_bench_${(eventsSigned++).toString(36).padStart(8, '0')}`)) => apiGatewayEvent({
    method: 'POST',
    routeKey: 'ANY /webhooks/{webhook_id}',
    rawPath: `/webhooks/${webhookId}`,
    pathParameters: { webhook_id: webhookId },
    headers: { 'content-type': 'application/json', 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)', ...signStripe({ secret: signingSecret, body: eventBody, timestamp: Math.floor(Date.now() / 1000) }) },
    body: eventBody,
  });

  /** The bare baseline, written as a handler would be. */
  const bare: Handler = async (event) => {
    if (!verifyStripeByHand(signingSecret, event.body!, event.headers['stripe-signature']!, Math.floor(Date.now() / 1000))) return { statusCode: 401 };
    const parsed = JSON.parse(event.body!) as { id: string };
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'accepted', event_id: parsed.id }) };
  };

  const run = async (handler: Handler, events: number): Promise<PerEvent> => {
    const signed = Array.from({ length: events }, () => signedEvent());
    const enginesBefore = await engines.cpuUs();
    const { wallUs, cpuUs } = await measureCpu(async () => {
      for (let i = 0; i < events; i++) {
        const result = await handler(signed[i]!);
        if (result.body?.includes('"duplicate"')) throw new Error('the handler took an event as a replay: each must be its own');
        if (result.statusCode !== 200) throw new Error(`the handler answered ${result.statusCode} ${result.body}`);
      }
    });
    const enginesCpuUs = (await engines.cpuUs()) - enginesBefore;
    return { wallUs: wallUs / events, cpuUs: cpuUs / events, enginesCpuUs: enginesCpuUs / events };
  };

  // Warm-up: JIT, the clients' connection pools, the trigger into the receiver's cache.
  await run(webhook, WARMUP_EVENTS);
  await run(bare, BASELINE_EVENTS);

  // The SDK floor replays what the handler sends: one of its own messages, byte for byte, and an
  // execution record and a request item like its own (the two puts in parallel, as the handler makes them).
  const sqs = new SQSClient({ region: LOCAL_AWS_ENV.AWS_REGION, endpoint: engines.info.env.AWS_ENDPOINT_URL_SQS });
  const queueUrl = engines.info.queueUrls.flowEvents;
  const [sample] = (await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1 }))).Messages ?? [];
  if (!sample?.Body) throw new Error('the handler sent nothing to the flow queue');
  await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: sample.ReceiptHandle! }));
  const message = JSON.parse(sample.Body) as { ref: { triggerId: string; executionId: string }; input: { trigger: { event_id: string; received_at: string; type?: string } } };
  const executionsTable = engines.info.env.EXECUTIONS_TABLE!;
  let floorCalls = 0;
  const requestJson = JSON.stringify({ method: 'POST', headers: signedEvent().headers, query: {}, source_ip: '127.0.0.1', body_encoding: 'utf8', body_bytes: body.length });
  const sdkFloor: Handler = async () => {
    const { trigger } = message.input;
    const executionId = `floor${floorCalls++}`;
    const expiresAt = Math.floor(Date.now() / 1000) + 604_800;
    await Promise.all([
      dynamoDocumentClient.send(new PutCommand({
        TableName: executionsTable,
        Item: { pk: `TRIGGER#${message.ref.triggerId}#0`, sk: `EXEC#${trigger.received_at}#${executionId}`, execution_id: executionId, event_id: trigger.event_id, received_at: trigger.received_at, type: trigger.type, status: 'queued', attempts: 0, timeline: {}, expires_at: expiresAt },
      })),
      dynamoDocumentClient.send(new PutCommand({
        TableName: executionsTable,
        Item: { pk: `REQUEST#${message.ref.triggerId}#floor`, sk: `${trigger.received_at}#${executionId}`, execution_id: executionId, request_json: requestJson, body, expires_at: expiresAt },
      })),
    ]);
    await sqsClient.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: sample.Body! }));
    return { statusCode: 200 };
  };
  await run(sdkFloor, FLOOR_WARMUP_EVENTS);

  const samples = { handler: [] as PerEvent[], floor: [] as PerEvent[], bare: [] as PerEvent[] };
  const subjects = [
    ['handler', webhook, HANDLER_EVENTS],
    ['floor', sdkFloor, HANDLER_EVENTS],
    ['bare', bare, BASELINE_EVENTS],
  ] as const;
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order, so that no subject always runs right after another.
    for (let i = 0; i < subjects.length; i++) {
      const [name, handler, events] = subjects[(round + i) % subjects.length]!;
      samples[name].push(await run(handler, events));
    }
  }
  const summarise = (list: PerEvent[]) => ({
    wall_us_per_event: median(list.map((s) => s.wallUs)),
    cpu_us_per_event: median(list.map((s) => s.cpuUs)),
    engines_cpu_us_per_event: median(list.map((s) => s.enginesCpuUs)),
  });
  const handler = summarise(samples.handler);
  const floor = summarise(samples.floor);
  const baseline = summarise(samples.bare);
  const ratio = median(samples.handler.map((s, i) => samples.bare[i]!.wallUs / s.wallUs));
  const cpuRatio = median(samples.handler.map((s, i) => samples.bare[i]!.cpuUs / s.cpuUs));

  const sent = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }))).Attributes ?? {};
  const messages = Number(sent.ApproximateNumberOfMessages ?? 0) + Number(sent.ApproximateNumberOfMessagesNotVisible ?? 0);
  // Every send is one message, less the sample taken off the queue.
  const expected = WARMUP_EVENTS + ROUNDS * HANDLER_EVENTS + FLOOR_WARMUP_EVENTS + ROUNDS * HANDLER_EVENTS - 1;
  sqs.destroy();
  await engines.stop();
  return {
    body_bytes: BODY_BYTES,
    rounds: ROUNDS,
    events_per_round: { handler: HANDLER_EVENTS, baseline: BASELINE_EVENTS },
    handler,
    sdk_floor: floor,
    baseline,
    ratio,
    cpu_ratio: cpuRatio,
    flow_queue_messages: messages,
    expected_messages: expected,
  };
}

serveParent(await measure(), async () => undefined);
