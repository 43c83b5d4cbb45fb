/**
 * The throughput bench's baselines, each in a process of its own like the local stack:
 * - "bare": a `node:http` server that verifies Stripe's signature by hand, parses the JSON body,
 *   and answers 200;
 * - "durable floor" (`BENCH_DURABLE=1`): the same, plus the one step no design that acknowledges
 *   only what is safely queued can skip, a `SendMessage` of the event through the AWS SDK to a
 *   local-aws-sqs engine in this same process, as the local stack runs its engines. It stores
 *   nothing else and runs no flow, so the stack cannot beat it: the gap is the stack's own cost.
 * - "recorded floor" (`BENCH_RECORDED_DIR=<dir>`): the durable floor plus what the product promises
 *   of every acknowledged delivery, its record and its request written before the answer: two
 *   PutItems through the AWS SDK to dynalite on that data directory (every write fsync'd), made
 *   with the local stack's own engines, as the receiver makes them. Still no flow, no worker.
 */
import { createServer, type ServerResponse } from 'node:http';
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createSqsServer } from 'local-aws-sqs';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { createAwsClients } from '../../functions/adapters/aws/clients.js';
import { dynamoClient } from '../../functions/adapters/aws/clients/dynamo.js';
import { sqsClient } from '../../functions/adapters/aws/clients/sqs.js';
import { LOCAL_AWS_ENV, startEngines } from '../../local/engines.js';
import { verifyStripeByHand } from './baselines.js';
import { serveParent } from './child.js';

const secret = process.env.BENCH_STRIPE_SECRET!;

/** `undefined` for the bare server; for the durable floor, sends one message and closes its engine. */
async function startQueue(): Promise<{ send(body: string): Promise<unknown>; stop(): Promise<void> } | undefined> {
  if (process.env.BENCH_RECORDED_DIR) return startRecorded(process.env.BENCH_RECORDED_DIR);
  if (process.env.BENCH_DURABLE !== '1') return undefined;
  const engine = await createSqsServer({ port: 0, hostname: '127.0.0.1', emulateQueueCreationLifecycle: false });
  // The SDK's defaults, as the product's own client has them.
  const sqs = new SQSClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    endpoint: `http://127.0.0.1:${(engine.address() as { port: number }).port}`,
  });
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'durable-floor' }));
  return {
    send: (body) => sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: body })),
    async stop() {
      sqs.destroy();
      await new Promise<void>((done) => engine.close(() => done()));
    },
  };
}

/** The recorded floor: the status record and the request (in parallel, as the receiver writes them), then the send. */
async function startRecorded(dir: string) {
  const engines = await startEngines({ flowsDirs: [resolve(import.meta.dirname, '../../flows')], visibilityTimeoutSeconds: 30, dynamodbPath: resolve(dir, 'dynamodb'), dataDir: dir });
  const aws = createAwsClients({
    region: LOCAL_AWS_ENV.AWS_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    endpoints: { dynamodb: engines.env.AWS_ENDPOINT_URL_DYNAMODB, sqs: engines.env.AWS_ENDPOINT_URL_SQS },
  });
  const dynamo = dynamoClient(aws);
  const sqs = sqsClient(aws);
  const TableName = engines.env.EXECUTIONS_TABLE!;
  return {
    async send(body: string) {
      const id = randomBytes(16).toString('hex');
      const receivedAt = new Date().toISOString();
      await Promise.all([
        dynamo.send(new PutCommand({ TableName, Item: { pk: `TRIGGER#floor#${id.charCodeAt(0) % 8}`, sk: `EXEC#${receivedAt}#${id}`, status: 'queued', attempts: 0, expires_at: 0 } })),
        dynamo.send(new PutCommand({ TableName, Item: { pk: `REQUEST#floor#${id}`, sk: `${receivedAt}#${id}`, body, expires_at: 0 } })),
      ]);
      await sqs.send(new SendMessageCommand({ QueueUrl: engines.queueUrls.flowEvents, MessageBody: body }));
    },
    stop: () => engines.stop(),
  };
}

const answer = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

const queue = await startQueue();
const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const signature = req.headers['stripe-signature'];
  if (typeof signature !== 'string' || !verifyStripeByHand(secret, body, signature, Math.floor(Date.now() / 1000))) {
    return answer(res, 401, { error: 'invalid_signature' });
  }
  const text = body.toString('utf8');
  let event: { id?: unknown };
  try {
    event = JSON.parse(text) as { id?: unknown };
  } catch {
    return answer(res, 400, { error: 'validation_error' });
  }
  if (queue) {
    try {
      await queue.send(text);
    } catch {
      return answer(res, 503, { error: 'unavailable' });
    }
  }
  answer(res, 200, { status: 'accepted', event_id: event.id });
});
await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
serveParent({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}/webhooks/bare` }, async () => {
  server.closeAllConnections();
  await new Promise<void>((done) => server.close(() => done()));
  await queue?.stop();
});
