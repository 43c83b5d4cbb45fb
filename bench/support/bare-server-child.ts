/**
 * The throughput bench's baseline: a bare `node:http` server that verifies Stripe's signature by
 * hand, parses the JSON body, and answers 200, in a process of its own like the local stack.
 */
import { createServer } from 'node:http';
import { verifyStripeByHand } from './baselines.js';
import { serveParent } from './child.js';

const secret = process.env.BENCH_STRIPE_SECRET!;
const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const signature = req.headers['stripe-signature'];
  if (typeof signature !== 'string' || !verifyStripeByHand(secret, body, signature, Math.floor(Date.now() / 1000))) {
    res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_signature"}');
    return;
  }
  let event: { id?: unknown };
  try {
    event = JSON.parse(body.toString('utf8')) as { id?: unknown };
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"validation_error"}');
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'accepted', event_id: event.id }));
});
await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
serveParent({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}/webhooks/bare` }, async () => {
  server.closeAllConnections();
  await new Promise<void>((done) => server.close(() => done()));
});
