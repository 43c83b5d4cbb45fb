/**
 * The throughput bench's baselines, each in a process of its own like the local stack:
 * - "bare": a `node:http` server that verifies Stripe's signature by hand, parses the JSON body,
 *   and answers 200;
 * - "durable floor" (`BENCH_DURABLE=1`): the same, plus the one step no design that acknowledges
 *   only what is safely queued can skip, a `SendMessage` of the event through the AWS SDK to a
 *   local-aws-sqs engine in this same process, as the local stack runs its engines. It stores
 *   nothing else and runs no flow, so the stack cannot beat it: the gap is the stack's own cost.
 */
import { createServer, type ServerResponse } from 'node:http';
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createSqsServer } from 'local-aws-sqs';
import { verifyStripeByHand } from './baselines.js';
import { serveParent } from './child.js';

const secret = process.env.BENCH_STRIPE_SECRET!;

/** `undefined` for the bare server; for the durable floor, sends one message and closes its engine. */
async function startQueue(): Promise<{ send(body: string): Promise<unknown>; stop(): Promise<void> } | undefined> {
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
