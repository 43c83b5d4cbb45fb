import { Agent, createServer, request } from 'node:http';
import { resolve } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { expect, it, vi } from 'vitest';
import { LOCAL_AWS_ENV, startEngines } from '../../local/engines.js';
import { keepIdleConnections } from '../../local/idle-connections.js';

/*
 * nodejs/node#47130 (open): a Node HTTP server closes a connection after 5 s idle, and a client
 * whose event loop was held past that sends its next requests on the sockets it has not yet seen
 * close: each fails with ECONNRESET. The SDK retries them from a quota that a burst empties, so
 * under load a call failed unretried (a stream fetch answered 500). The engines keep idle
 * connections open (`local/idle-connections.ts`), as AWS's endpoints keep them past any pause.
 * DynamoDB and SQS run on the engine thread here, as `npm start` runs them, so their timers run
 * while this thread is held.
 */
const HELD_MS = 6_000;
const CONNECTIONS = 20;

it(`a client whose event loop was held ${HELD_MS / 1000} s reaches DynamoDB and SQS again on every pooled connection, first time`, async () => {
  const engines = await startEngines({ flowsDirs: [resolve(import.meta.dirname, '../../flows')], visibilityTimeoutSeconds: 2, engineThread: true, stepFunctions: false });
  // No retries: a reset connection is an error here, not a retry that may or may not be left.
  const config = { region: LOCAL_AWS_ENV.AWS_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 };
  const dynamo = new DynamoDBClient({ ...config, endpoint: engines.env.AWS_ENDPOINT_URL_DYNAMODB });
  const sqs = new SQSClient({ ...config, endpoint: engines.env.AWS_ENDPOINT_URL_SQS });
  const burst = () => Promise.allSettled(Array.from({ length: CONNECTIONS }, (_, i) => (i % 2 ? dynamo.send(new ListTablesCommand({})) : sqs.send(new ListQueuesCommand({})))));
  const failures = (results: PromiseSettledResult<unknown>[]) => results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
  try {
    // Opens the connections the pools then keep.
    expect(failures(await burst())).toEqual([]);
    // Held, as a loaded machine or a long synchronous step holds a function's thread.
    for (const until = Date.now() + HELD_MS; Date.now() < until;) { /* held */ }
    expect(failures(await burst())).toEqual([]);
  } finally {
    dynamo.destroy();
    sqs.destroy();
    await engines.stop();
  }
}, 60_000);

it('a server closed while a request is under way (an SQS long poll) closes once it has answered, idle connections at once', async () => {
  let answer!: () => void;
  const server = keepIdleConnections(createServer((req, res) => {
    if (req.url === '/held') answer = () => res.end('held');
    else res.end('ok');
  }));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  const agent = new Agent({ keepAlive: true });
  const get = (path: string) => new Promise<string>((done, fail) => request({ host: '127.0.0.1', port, path, agent }, (res) => {
    let body = '';
    res.on('data', (chunk) => (body += chunk)).on('end', () => done(body));
  }).on('error', fail).end());
  try {
    await Promise.all([get('/'), get('/')]);
    const held = get('/held');
    await vi.waitFor(() => expect(answer).toBeTypeOf('function'));
    let closed = false;
    const closing = new Promise<void>((done) => server.close(() => done())).then(() => (closed = true));
    answer();
    expect(await held).toBe('held');
    // Without the close-time timeout the answered connection stayed open and this never resolved.
    await closing;
    expect(closed).toBe(true);
  } finally {
    agent.destroy();
    server.closeAllConnections();
  }
}, 30_000);
